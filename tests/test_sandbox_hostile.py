"""Hostile programs (tests/hostile/*.py) through the page's call and the command line.

Each program says in its header what it tries, what must happen, and its
``# expect:`` line: ``STATUSES[:DETAILS] WORDS``, alternatives separated by
``|``. The run's status must be one of STATUSES; for a limit, its ``limit``
(or for a crash, its signal) one of DETAILS; its message must hold one of
WORDS (and a stopped run names its limit). Every run ends within the wall-clock
limit plus 2 s. From outside, after each: no marker file appeared, the
repository and /etc/passwd are unchanged, the test's TCP, UDP and unix
sockets were never reached, the server's secret variable was never printed,
and the pool still serves the seed with the ops a plain walk of ``grad_fn``
finds in this process.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.helpers import ROOT
from harness.hostile import HOSTILE, check, expectation, seed_ops_here
from stockdemo.sandbox import SEED_CODE, run_code

SECRET_NAME = "STOCKDEMO_HOSTILE_SECRET"
CLI_PARALLEL = 3


class Outside:
    """What a program must never reach, watched from this process."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.marker = tmp / "marker"
        self.secret = secrets.token_hex(16)
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.unix_path = str(tmp / "server.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        self.unix.listen()
        self.unix.setblocking(False)
        self.repo = self._repo_state()
        self.passwd = Path("/etc/passwd").read_bytes()

    def source(self, path: Path) -> str:
        text = path.read_text()
        values = {"__PORT__": self.tcp.getsockname()[1], "__UDP_PORT__": self.udp.getsockname()[1],
                  "__UNIX_PATH__": self.unix_path, "__SERVER_PID__": os.getpid(), "__MARKER__": self.marker,
                  "__REPO__": ROOT, "__SECRET_NAME__": SECRET_NAME}
        for key, value in values.items():
            text = text.replace(key, str(value))
        return text

    @staticmethod
    def _repo_state() -> str:
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
        init = (ROOT / "stockdemo" / "__init__.py").read_bytes()
        return status + hashlib.sha256(init).hexdigest()

    def breaches(self) -> list[str]:
        found = []
        for name, sock in (("TCP", self.tcp), ("unix", self.unix)):
            try:
                sock.accept()[0].close()
                found.append(f"the {name} socket was connected to")
            except BlockingIOError:
                pass
        try:
            self.udp.recvfrom(1024)
            found.append("the UDP socket received a datagram")
        except BlockingIOError:
            pass
        left = sorted(p.name for p in self.tmp.iterdir() if p.name != "server.sock")
        if left:
            found.append(f"files appeared: {left}")
        if self._repo_state() != self.repo:
            found.append("the repository changed")
        if Path("/etc/passwd").read_bytes() != self.passwd:
            found.append("/etc/passwd changed")
        return found

    def close(self) -> None:
        for sock in (self.tcp, self.udp, self.unix):
            sock.close()


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    watch = Outside(tmp_path_factory.mktemp("outside"))
    os.environ[SECRET_NAME] = watch.secret  # a variable of the "server" (this process, the CLI's parent)
    try:
        yield watch
    finally:
        os.environ.pop(SECRET_NAME, None)
        watch.close()


@pytest.fixture(scope="module")
def seed_ops() -> dict[str, int]:
    return seed_ops_here()


@pytest.fixture(scope="module")
def warm_pool():
    run = run_code(SEED_CODE)  # the fork server starts here, not in the first timed run
    assert run.ok, run.message


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_a_hostile_program_is_stopped_and_nothing_gets_out_through_the_pages_call(
        path, outside, seed_ops, warm_pool):
    expect = expectation(path)
    started = time.monotonic()
    run = run_code(outside.source(path))
    elapsed = time.monotonic() - started
    result = run.to_dict()
    check(result, expect, elapsed, path.stem)
    assert outside.breaches() == []
    assert outside.secret not in json.dumps(result)
    after = run_code(SEED_CODE)
    assert after.ok, after.message
    assert after.ops_by_type == seed_ops


def test_there_are_thirty_hostile_programs_or_more():
    assert len(HOSTILE) >= 30


def _cli(paths: list[Path], outside: Outside) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """One command line over ``paths``, each run in its own sandboxed child -> (the process, name -> JSON)."""
    scripts = []
    for path in paths:
        script = outside.tmp.parent / f"{path.stem}.py"  # beside the watched folder, not in it
        script.write_text(outside.source(path))
        scripts.append(str(script))
    done = subprocess.run([sys.executable, "-m", "stockdemo", "code", *scripts],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    results = [json.loads(line) for line in done.stdout.splitlines()]
    return done, {Path(r["file"]).stem: r for r in results}


@pytest.fixture(scope="module")
def cli_runs(outside) -> dict[str, tuple[subprocess.CompletedProcess, dict]]:
    """Every program through the command line: CLI_PARALLEL processes, each given a share of them."""
    shares = [HOSTILE[i::CLI_PARALLEL] for i in range(CLI_PARALLEL)]
    with concurrent.futures.ThreadPoolExecutor(CLI_PARALLEL) as pool:
        done = list(pool.map(lambda share: _cli(share, outside), shares))
    return {name: (process, result) for process, results in done for name, result in results.items()}


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_a_hostile_program_is_stopped_the_same_way_through_the_command_line(path, outside, cli_runs):
    assert path.stem in cli_runs, "the command line gave no result for it"
    process, result = cli_runs[path.stem]
    assert process.returncode == 1, process.stderr
    # The command line's own process starts a pool; the run itself is timed in the parent.
    check(result, expectation(path), result["seconds"], path.stem)
    assert outside.secret not in process.stdout + process.stderr
    assert outside.breaches() == []


def test_several_files_take_json_lines_only(tmp_path):
    script = tmp_path / "seed.py"
    script.write_text(SEED_CODE)
    done = subprocess.run([sys.executable, "-m", "stockdemo", "code", str(script), str(script),
                           "--format", "dot"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "JSON lines" in done.stderr
