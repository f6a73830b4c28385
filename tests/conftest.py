"""Shared test set-up: one torch thread (as on the server), the builds started beside the tests
(harness/builds.py), and the fixtures for the servers tests start (`make serve`'s set-up, a
redis-server)."""

import os

import pytest
import torch

torch.set_num_threads(1)
# harness's checks report their operands as a test's own asserts do.
pytest.register_assert_rewrite("harness")


def pytest_collection_finish(session):
    # The container image and the wheel's environment take minutes to build: started beside
    # the tests before the ones that use them, not in front. Not beside a cold server's first
    # page, though: on a fresh machine the image's debootstrap beside it kept that page from
    # finishing for minutes (CI, twice), so with browser tests selected their server starts
    # the builds once its first page is served (tests/browser/conftest.py).
    if session.config.option.collectonly:
        return
    from harness import builds

    files = {item.path.name for item in session.items}
    if files & {"test_image.py", "test_kube.py"}:
        builds.BUILDS.append(builds.start_image)
    if "test_package.py" in files:
        builds.BUILDS.append(builds.start_package)
    if not any("browser" in item.path.parts for item in session.items):
        builds.start_builds()


@pytest.fixture
def clear_caches():
    """st.cache_* is shared by every AppTest in the process: start cold where it matters."""
    from harness.helpers import cold_caches

    cold_caches()
    yield


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """A real redis-server of the test module's own -> its URL."""
    from harness.redis_server import RedisServer

    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def served(request):
    """``make serve``'s set-up for the test module: HAProxy, redis-server and its replicas
    (``SERVE_REPLICAS`` in the module, 2 unless it says; more of deploy/serve.py's options in
    ``SERVE_OPTIONS``) -> the running harness.servers.Target."""
    from harness.servers import Target

    for program in ("/usr/sbin/haproxy", "/usr/bin/redis-server"):
        if not os.path.exists(program):
            pytest.fail(f"{program} is missing: apt-get install haproxy redis-server "
                        "(.ci/run installs them). These tests are required.")
    target = Target("serve", replicas=getattr(request.module, "SERVE_REPLICAS", 2),
                    options=getattr(request.module, "SERVE_OPTIONS", ()))
    try:
        target.wait_ready()
        yield target
    finally:
        target.stop()
        os.unlink(target.log.name)
