"""The app started for a test or a benchmark, and what its processes cost.

``Target`` starts the app (``deploy/serve.py``, or one ``streamlit run app.py``) on free
loopback ports; the process readers (``descendants``, ``pss_mb``, ``cpu_s``) read /proc.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from harness.helpers import ROOT, free_port, server_command

CORES = len(os.sched_getaffinity(0))
RSS_EVERY_S = 2.0  # memory sampling interval


def descendants(pid: int) -> list[int]:
    """pid and every process below it (replicas, training workers, HAProxy, redis)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def pss_mb(pid: int) -> float:
    """Proportional set size: shared pages (torch's libraries, in every process) counted once overall."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Target:
    """The app under test: ``single`` (streamlit run) or ``serve`` (deploy/serve.py)."""

    def __init__(self, kind: str, replicas: int = 0, options: tuple[str, ...] = (),
                 sample_memory: bool = True):
        """``options``: more of deploy/serve.py's (``--capacity 3``); ``sample_memory=False`` for a
        figure of a few ms, which the sampler's walk of every process's memory map would disturb."""
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile("w+", prefix=f"stockdemo-load-{kind}-", suffix=".log",
                                               delete=False)
        self.state_file = Path(tempfile.mkdtemp(prefix="stockdemo-load-")) / "serve.json"
        if kind == "single":
            cmd = server_command(self.port, "--server.fileWatcherType", "none")
        else:
            cmd = [sys.executable, str(ROOT / "deploy" / "serve.py"), "--port", str(self.port),
                   "--address", "127.0.0.1", "--state", str(self.state_file)]
            if replicas:
                cmd += ["--replicas", str(replicas)]
            cmd += options
        self.t_start = time.monotonic()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, text=True)
        self.rss: list[tuple[float, float]] = []  # (time, MB of every process together, PSS)
        self._stop = threading.Event()
        if sample_memory:
            threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        # Every 2 s, not 0.5: reading smaps_rollup of every process costs the kernel
        # ~31 ms of CPU per sample here, taken from the servers under test.
        while not self._stop.wait(RSS_EVERY_S):
            self.rss.append((time.monotonic(), self.rss_now()))

    def rss_now(self) -> float:
        return sum(pss_mb(p) for p in descendants(self.proc.pid))

    def cpu_s(self) -> float:
        return sum(cpu_s(p) for p in descendants(self.proc.pid))

    def peak_rss(self, since: float = 0.0) -> float:
        return max((r for t, r in self.rss if t >= since), default=float("nan"))

    def state(self) -> dict:
        return json.loads(self.state_file.read_text())

    def wait_ready(self, timeout: float = 120.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited early, see {self.log.name}")
            ready = self.kind == "single" or self.state_file.exists()
            if ready:
                try:
                    with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1):
                        return time.monotonic() - self.t_start
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"{self.kind} did not answer /_stcore/health in {timeout:.0f} s")

    def wait_settled(self, idle_cores: float = 0.15, timeout: float = 90.0) -> float:
        """Until start-up work is done -> seconds waited.

        Replicas start their training workers with them (deploy/replica.py), and a
        worker's imports and warm-up run take about 4 s of CPU: a scenario started
        at once would measure the start-up, not the class. Settled: every process
        together under ``idle_cores`` of a core over one second.
        """
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            before = self.cpu_s()
            time.sleep(1.0)
            if self.cpu_s() - before < idle_cores:
                break
        return time.monotonic() - started

    def kill_replica(self, name: str) -> int:
        [replica] = [r for r in self.state()["replicas"] if r["name"] == name]
        os.kill(replica["pid"], signal.SIGKILL)
        return replica["pid"]

    def stop(self) -> None:
        self._stop.set()
        self.proc.send_signal(signal.SIGINT if self.kind == "serve" else signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.flush()

    def log_problems(self) -> list[str]:
        """Lines of the log with tracebacks or errors, the first traceback in full."""
        lines = Path(self.log.name).read_text(errors="replace").splitlines()
        out, first_tb = [], True
        for i, ln in enumerate(lines):
            if ln.startswith("Traceback") and first_tb:
                first_tb = False
                out.extend(lines[i:i + 30])
            elif re.search(r"Traceback|Error|Exception", ln):
                out.append(ln)
        return out


