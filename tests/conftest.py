"""Shared test set-up: one torch thread (as on the server), the app's root, and the servers
tests start (`make serve`'s set-up, a redis-server)."""

import os
from pathlib import Path

import pytest
import streamlit as st
import torch

ROOT = Path(__file__).resolve().parent.parent
torch.set_num_threads(1)


BUILDS: list = []  # the builds to start; the browser tests' server starts them once it is warm


def pytest_collection_finish(session):
    # The container image and the wheel's environment take minutes to build: started beside
    # the tests before the ones that use them, not in front. Not beside a cold server's first
    # page, though: on a fresh machine the image's debootstrap beside it kept that page from
    # finishing for minutes (CI, twice), so with browser tests selected their server starts
    # the builds once its first page is served (tests/browser/conftest.py).
    if session.config.option.collectonly:
        return
    files = {item.path.name for item in session.items}
    if files & {"test_image.py", "test_kube.py"}:
        from tests.test_image import start_build

        BUILDS.append(start_build)
    if "test_package.py" in files:
        from tests.test_package import start_package

        BUILDS.append(start_package)
    if not any("browser" in item.path.parts for item in session.items):
        start_builds()


def start_builds() -> None:
    """Start the builds collected, once (each queues behind the one before)."""
    while BUILDS:
        BUILDS.pop(0)()


@pytest.fixture
def clear_caches():
    """st.cache_* is shared by every AppTest in the process: start cold where it matters."""
    from stockdemo.ui.caches import clear_held

    st.cache_data.clear()
    st.cache_resource.clear()
    clear_held()
    yield


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """A real redis-server of the test module's own -> its URL."""
    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def served(request):
    """``make serve``'s set-up for the test module: HAProxy, redis-server and its replicas
    (``SERVE_REPLICAS`` in the module, 2 unless it says) -> the running harness.sessions.Target."""
    from harness.sessions import Target

    for program in ("/usr/sbin/haproxy", "/usr/bin/redis-server"):
        if not os.path.exists(program):
            pytest.fail(f"{program} is missing: apt-get install haproxy redis-server "
                        "(.ci/run installs them). These tests are required.")
    target = Target("serve", replicas=getattr(request.module, "SERVE_REPLICAS", 2))
    try:
        target.wait_ready()
        yield target
    finally:
        target.stop()
        os.unlink(target.log.name)
