"""A small host simulated on this machine: a cgroup (v1) with a memory limit and a CPU quota.

What tests and benchmarks share to run the app as Streamlit Community Cloud would
(690 MiB, one CPU): make the cgroup, start a process in it, read what happened
(peak memory, OOM kills), and the memory of each of the app's processes by PSS.
No ``stockdemo`` import here (see harness/helpers.py). Needs root and cgroup v1's
``memory`` and ``cpu`` controllers mounted under /sys/fs/cgroup, as on this machine.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

from harness.helpers import wait_until

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


def own_path(controller: str) -> str:
    """This process's cgroup path for ``controller`` (v1), from /proc/self/cgroup: '/', '/a/b'."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return "/"


def available() -> str | None:
    """None if a small host can be made here, else why not (in words)."""
    if os.geteuid() != 0:
        return "making a cgroup needs root"
    for controller in ("memory", "cpu"):
        if not (CGROUP_ROOT / controller / "cgroup.procs").exists():
            return f"cgroup v1's {controller} controller is not mounted at {CGROUP_ROOT / controller}"
    return None


@dataclass
class SmallHost:
    """A memory cgroup (a child of this process's own, so its memory still counts there) and a cpu one."""

    name: str
    memory_mib: int | None
    cpus: float | None

    def __post_init__(self) -> None:
        self.memory = CGROUP_ROOT / "memory" / own_path("memory").lstrip("/") / self.name
        self.cpu = CGROUP_ROOT / "cpu" / own_path("cpu").lstrip("/") / self.name
        self.memory.mkdir(exist_ok=True)
        self.cpu.mkdir(exist_ok=True)
        if self.memory_mib:
            (self.memory / "memory.limit_in_bytes").write_text(str(self.memory_mib * 2**20))
        if self.cpus:
            (self.cpu / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.cpu / "cpu.cfs_quota_us").write_text(str(int(self.cpus * PERIOD_US)))

    def join(self) -> None:
        """Move the calling process into both cgroups (``preexec_fn`` of the server's Popen)."""
        pid = str(os.getpid())
        (self.memory / "cgroup.procs").write_text(pid)
        (self.cpu / "cgroup.procs").write_text(pid)

    def pids(self) -> list[int]:
        return [int(p) for p in (self.memory / "cgroup.procs").read_text().split()]

    def peak_mib(self) -> float:
        return int((self.memory / "memory.max_usage_in_bytes").read_text()) / 2**20

    def usage_mib(self) -> float:
        return int((self.memory / "memory.usage_in_bytes").read_text()) / 2**20

    def oom_kills(self) -> int:
        for line in (self.memory / "memory.oom_control").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def failcnt(self) -> int:
        return int((self.memory / "memory.failcnt").read_text())

    def remove(self, timeout: float = 10.0) -> None:
        """SIGKILL whatever is left inside (only what we started lives there), then remove both folders."""
        def emptied() -> bool:
            if not self.memory.exists():
                return True
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.memory.rmdir()  # OSError (busy) until its last process is reaped: try again
            return True

        try:
            wait_until(emptied, timeout, f"{self.memory} emptied and removed")
        except AssertionError:
            pass  # as before: what is left is left, the cpu folder still goes
        if self.cpu.exists():
            self.cpu.rmdir()


def smaps(pid: int) -> dict[str, float]:
    """MB of ``pid`` from /proc/PID/smaps_rollup: Pss, Rss, Private_Dirty ({} if it is gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Pss", "Rss", "Private_Dirty", "Private_Clean", "Shared_Clean", "Shared_Dirty"):
                    out[key] = int(rest.split()[0]) / 1024
    except (OSError, ValueError, IndexError):
        return {}
    return out


def process_tree(pid: int) -> dict[int, tuple[int, str]]:
    """``pid`` and every descendant -> (parent pid, command line)."""
    parents = {int(e): parent_of(int(e)) for e in os.listdir("/proc") if e.isdigit()}
    out, todo = {}, [pid]
    while todo:
        p = todo.pop()
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        out[p] = (parents.get(p, 0), cmd)
        todo.extend(c for c, pp in parents.items() if pp == p)
    return out


def parent_of(pid: int) -> int:
    """``pid``'s parent, from /proc/PID/stat (0 once it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def children(pid: int) -> list[int]:
    """The live children of ``pid``, as the kernel lists them per thread."""
    return [int(c) for t in os.listdir(f"/proc/{pid}/task")
            for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]


def seccomp_mode(pid: int) -> int | None:
    """/proc/PID/status's Seccomp: 0 none, 2 a filter (a sandbox run's); None if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Seccomp:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def role(pid: int, tree: dict[int, tuple[int, str]], server: int) -> str:
    """What one of the app's processes is, by its command line and its parent (before the fork
    server, by the two warm parents' command lines)."""
    parent, cmd = tree[pid]
    if pid == server:
        return "server"
    if "stockdemo.forkserver.process" in cmd:
        if "stockdemo.forkserver.process" not in tree.get(parent, (0, ""))[1]:
            return "fork server"
        return "sandbox child" if seccomp_mode(pid) == 2 else "training worker"
    if "stockdemo.sandbox.parent" in cmd:  # the sandbox's parent before the fork server
        forked = "stockdemo.sandbox.parent" in tree.get(parent, (0, ""))[1]
        return "sandbox child" if forked else "sandbox parent"
    if "stockdemo.train.worker" in cmd:
        if "stockdemo.train.worker" in tree.get(parent, (0, ""))[1]:
            return "training worker"  # forked from the training pool's warm parent
        return "training parent" if "--parent" in cmd else "training worker"
    return cmd.split()[0].rsplit("/", 1)[-1] if cmd else "?"


def memory_by_process(server: int) -> list[tuple[str, int, dict[str, float]]]:
    """(role, pid, smaps figures) for the server and each of its descendants."""
    tree = process_tree(server)
    return [(role(p, tree, server), p, smaps(p)) for p in sorted(tree)]


def oom_score_adj(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/oom_score_adj").read_text())
    except (OSError, ValueError):
        return None
