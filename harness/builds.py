"""What takes minutes to build for a test run, built once, in the background from the run's start:
the container image (deploy/image.py, as ``make image``) and the wheel with its environment.

tests/conftest.py collects which of them the selected tests need (``BUILDS``) and starts them
(``start_builds``): beside the tests, not in front of them. One job at a time: two would take
both cores from the tests running meanwhile.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from deploy import image
from harness.helpers import ROOT

VENVS = ROOT / "artifacts" / "package-venv"
BUILDS: list[Callable[[], Future]] = []  # to start; with browser tests, once their server is warm


def start_builds() -> None:
    """Start the builds collected, once (each queues behind the one before)."""
    while BUILDS:
        BUILDS.pop(0)()


_JOBS: dict[str, Future] = {}
_JOBS_LOCK = threading.Lock()
_QUEUE: queue.Queue = queue.Queue()


def in_background(name: str, build: Callable[[], object]) -> Future:
    """Start ``build()`` once per test run, behind the jobs started before it -> its Future.

    For minutes of building (the container image, the wheel's environment) that tests
    would otherwise wait for in turn: tests/conftest.py starts them as the run begins and
    the tests that need them take ``.result()``. One job at a time: two would take both
    cores from the tests running meanwhile.
    """
    with _JOBS_LOCK:
        if name not in _JOBS:
            if not _JOBS:  # a daemon: a run stopped early does not wait for a build
                threading.Thread(target=_run_jobs, name="test-builds", daemon=True).start()
            _JOBS[name] = Future()
            _QUEUE.put((_JOBS[name], build))
        return _JOBS[name]


def _run_jobs() -> None:
    while True:
        done, build = _QUEUE.get()
        done.set_running_or_notify_cancel()
        try:
            done.set_result(build())
        except BaseException as e:  # (a build may sys.exit): the test that takes it fails with it
            done.set_exception(e)


def engine() -> tuple[list[str], dict[str, str]]:
    if not shutil.which("podman") and not shutil.which("docker"):
        pytest.fail("no container engine: apt-get install podman runc debootstrap (.ci/run does)")
    cmd = image.engine()
    return cmd, image.engine_env(cmd)


def start_image() -> Future:
    """Start the run's one build of the image (deploy/image.py, as `make image`), if not started."""
    return in_background("image", image.build)


def built_image() -> dict[str, float]:
    """The image, built once per test run -> {"seconds", "mb"}."""
    return start_image().result()


def pins(path: Path) -> dict[str, str]:
    """requirements file -> {normalised name: exact version} (``-r`` lines and comments skipped)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            (spec,) = req.specifier
            out[normalised(req.name)] = spec.version
    return out


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def clone(dest: Path) -> Path:
    """The repository's files as a fresh clone holds them (tracked, and new ones not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def build_wheel(tmp: Path) -> Path:
    src = clone(tmp / "clone")
    out = tmp / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)],
                   check=True, capture_output=True, timeout=300)
    (built,) = out.glob("stockdemo-*.whl")
    return built


def requires_dist(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return "\n".join(line for line in z.read(meta).decode().splitlines()
                         if line.startswith(("Requires-Dist:", "Provides-Extra:")))


def build_venv(wheel: Path, tmp: Path) -> Path:
    """A virtual environment holding the wheel and what it declares (core and the notebook extra).

    Created with no access to any other site-packages; pip resolves the wheel's own
    Requires-Dist, held to requirements.txt's pins where it names the package.
    """
    constraints = tmp / "constraints.txt"
    constraints.write_text("\n".join(f"{n}=={v}" for n, v in pins(ROOT / "requirements.txt").items()))
    key = hashlib.sha256("\n".join([sys.version, requires_dist(wheel), constraints.read_text()])
                         .encode()).hexdigest()[:12]
    env = VENVS / key
    VENVS.mkdir(parents=True, exist_ok=True)
    with open(VENVS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test run builds it; another waits
        for old in VENVS.iterdir():
            if old.is_dir() and old.name != key:
                shutil.rmtree(old)  # an environment for other dependencies: 1.2 GB each
        pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        if not (env / ".complete").exists():
            shutil.rmtree(env, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
            subprocess.run([*pip, "-c", str(constraints), f"{wheel}[notebook]"], check=True,
                           capture_output=True, timeout=900)
            (env / ".complete").touch()
        else:
            subprocess.run([*pip, "--no-deps", "--force-reinstall", str(wheel)], check=True,
                           capture_output=True, timeout=300)
        subprocess.run([str(env / "bin" / "python"), "-m", "pip", "check"], check=True,
                       capture_output=True, timeout=120)
    return env


def start_package() -> Future:
    """Build the wheel and its environment once per test run, in the background from the run's
    start (tests/conftest.py): about 40 s of pip that the tests before these need not wait for."""
    def build() -> tuple[Path, Path]:
        tmp = Path(tempfile.mkdtemp(prefix="stockdemo-package-"))
        atexit.register(shutil.rmtree, tmp, True)  # the clone and the wheel; the venv is kept
        built = build_wheel(tmp)
        return built, build_venv(built, tmp)

    return in_background("package", build)
