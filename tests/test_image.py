"""The app's image (deploy/Dockerfile), built as ``make image`` builds it and run with no network.

The image is built once per test run (``harness.builds.built_image``, shared with
tests/test_kube.py), in the background from the run's start (``start_image``, called
by tests/conftest.py): a build is minutes of unpacking wheels, and a test run has other
work to do meanwhile. The container runs with ``--network none``: only its own
loopback exists, so whatever the app needed from outside would fail here. The
checks run inside it (``podman exec``) with harness/session_probe.py mounted
read-only: the health check, a Playground session over Streamlit's websocket,
the training workers, the user, and the learners' code sandbox (the seed, a fork,
a socket and an endless loop, through ``python -m stockdemo code``).

Required, never skipped: a missing podman or runc fails with what to install
(.ci/run installs them).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest

from deploy import image
from harness.builds import built_image, engine
from harness.helpers import ROOT, wait_until
from harness.hostile import check_container_runs, run_in_container

PORT = 8501
START_TIMEOUT_S = 180  # import torch in a cold container on a busy 2-core box


def exec_in(name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    cmd, env = engine()
    return subprocess.run([*cmd, "exec", "-w", "/probe", name, *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def wait_healthy(name: str) -> float:
    """Until the app answers inside the container -> seconds waited."""
    started = time.monotonic()
    check = "import urllib.request as u; u.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=2)"
    try:
        wait_until(lambda: exec_in(name, "python", "-c", check).returncode == 0, START_TIMEOUT_S,
                   "the app answering in its container", interval=1)
        return time.monotonic() - started
    except AssertionError:
        pass
    cmd, env = engine()
    logs = subprocess.run([*cmd, "logs", name], env=env, capture_output=True, text=True)
    pytest.fail(f"the container did not answer within {START_TIMEOUT_S} s:\n{logs.stdout}{logs.stderr}")


@pytest.fixture(scope="module")
def container():
    cmd, env = engine()
    figures = built_image()
    print(f"image: built in {figures['seconds']:.0f} s, {figures['mb']:.0f} MB")
    name = f"stockdemo-test-{uuid.uuid4().hex[:8]}"
    subprocess.run([*cmd, "run", "-d", "--name", name, "--network", "none",
                    "-v", f"{ROOT / 'harness'}:/probe/harness:ro",
                    image.TAG], env=env, check=True, capture_output=True)
    try:
        print(f"image: the app answered {wait_healthy(name):.1f} s after the container started")
        yield name
    finally:
        subprocess.run([*cmd, "rm", "-f", "-t", "5", name], env=env, capture_output=True)


@pytest.fixture(scope="module")
def probe(container) -> dict:
    done = exec_in(container, "python", "-m", "harness.session_probe", f"http://127.0.0.1:{PORT}",
                   "--seq-len", "8", "--processes")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_image_is_the_cpu_build_and_of_a_sane_size():
    figures = built_image()
    cmd, env = engine()
    torch = subprocess.run([*cmd, "run", "--rm", "--network", "none", image.TAG, "python", "-c",
                            "import torch; print(torch.__version__, torch.version.cuda)"],
                           env=env, capture_output=True, text=True, check=True).stdout.split()
    assert torch == ["2.13.0+cpu", "None"]
    # The CUDA build alone is several GB; the CPU image measured 1.6 GB.
    assert figures["mb"] < 2500


def test_the_images_health_check_passes(container):
    cmd, env = engine()
    if image.engine()[0].endswith("podman"):
        check = subprocess.run([*cmd, "healthcheck", "run", container], env=env, capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    inspect = subprocess.run([*cmd, "image", "inspect", "--format", "{{json .Config.Healthcheck}}",
                              image.TAG], env=env, capture_output=True, text=True, check=True).stdout
    assert "/_stcore/health" in inspect


def test_a_playground_session_gets_its_graph_with_no_network(probe):
    assert probe["health"] == "ok"
    run = probe["playground"]
    assert run["ok"], run["errors"]
    # RNN, one layer, T = 8: one block per time step, steps 0..7.
    assert run["steps"] == list(range(8)) and run["nodes"] > 8


def _forked(container) -> list[dict]:
    """The container's processes of the fork server: itself and what it forked (same command)."""
    done = exec_in(container, "python", "-c", "import json; from harness.session_probe import processes; "
                   "print(json.dumps(processes()))")
    return [p for p in json.loads(done.stdout) if "stockdemo.forkserver.process" in p["cmd"]]


def test_the_training_workers_start_with_the_app(probe, container):
    # The workers are forked once the fork server has warmed torch, seconds after the app answers
    # (and before a first page needs them): no page visit is what starts them.
    forked = wait_until(lambda: len(_forked(container)) >= 2 and _forked(container), START_TIMEOUT_S,
                        "the fork server and at least one training worker of it")
    assert {p["uid"] for p in forked} == {10001}


def test_the_sandbox_runs_the_seed_and_stops_a_fork_a_socket_and_a_loop_as_outside(container):
    cmd, env = engine()
    exit_code, failed, runs = run_in_container([*cmd, "exec", "-i", "-w", "/app", container], env)
    print(f"image: the sandbox's walls in the container: {runs['seed']['walls']}; seed "
          f"{runs['seed']['seconds'] * 1000:.0f} ms fork to result")
    check_container_runs(exit_code, failed, runs)


def test_nothing_runs_as_root(probe, container):
    app = [p for p in probe["processes"]
           if "replica.py" in p["cmd"] or "stockdemo.forkserver.process" in p["cmd"]]
    assert app and {p["uid"] for p in app} == {10001}
    cmd, env = engine()
    user = subprocess.run([*cmd, "image", "inspect", "--format", "{{.Config.User}}", image.TAG],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert user == "10001"
    assert exec_in(container, "id", "-u").stdout.strip() == "10001"
