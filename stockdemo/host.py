"""What the host gives this server, read once at start, and what the app runs within it.

A free host (Streamlit Community Cloud: 0.078-2 cores, 690 MB-2.7 GB) or a
container says so through its cgroup, not through ``os.cpu_count()`` or
``/proc/meminfo``, which show the whole machine. ``limits()`` reads the
cgroup's memory limit and CPU quota (v2, or v1's ``memory`` and ``cpu``
controllers), and the sizes below follow from them: training workers, places
in the sandbox, and the bytes the caches may hold. An operator overrides any
of them with a variable (``STOCKDEMO_MEMORY_MB``, ``STOCKDEMO_CPUS``,
``STOCKDEMO_TRAIN_WORKERS``, ``STOCKDEMO_CODE_WORKERS``, ``STOCKDEMO_CACHE_MB``).

The sizes come from the memory measured after one learner's tour
(docs/hosting.md, "On a small host"): the server, the fork server with its
first training worker, then a share per worker or sandbox run more.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

CGROUP = Path("/sys/fs/cgroup")
NO_LIMIT = 2**60  # cgroup v1 writes "no limit" as a number near 2^63
MB = 2**20
# Measured after a learner's tour (docs/hosting.md, PSS): the server, and the fork server (which
# forks the sandbox's runs and the training workers) with its first worker.
SERVER_MB = 370
FORKSERVER_MB = 300
WORKER_MB = 100  # one more training worker: its run's own pages, up to the largest model allowed
CHILD_MB = 300  # one more place in the sandbox: its child's memory limit and more
CACHE_SHARE = 0.06  # of the host's memory, for the caches of runs, pictures and learners' runs
CACHE_MIN_MB, CACHE_MAX_MB = 32, 512


@dataclass(frozen=True)
class Limits:
    """The host as this process sees it: memory in bytes and whole CPUs, and where each came from."""

    memory: int
    cpus: int
    memory_from: str  # "cgroup v1", "cgroup v2", "machine", or the variable that set it
    cpus_from: str

    @property
    def memory_mb(self) -> int:
        return self.memory // MB


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cgroup_paths(text: str) -> dict[str, str]:
    """/proc/self/cgroup -> {controller: path}; cgroup v2's single line is under ""."""
    out = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                out[controller] = parts[2]
    return out


def _upwards(mount: Path, path: str) -> list[Path]:
    """The cgroup's folder and each parent up to the mount (a limit set above still applies).

    In a container the path may name the host's hierarchy while the mount shows only the
    container's own: the mount itself is then the folder to read.
    """
    folders, parts = [], [p for p in path.strip("/").split("/") if p]
    while parts:
        folders.append(mount.joinpath(*parts))
        parts.pop()
    return [*[f for f in folders if f.is_dir()], mount]


def cgroup_memory(root: Path = CGROUP, proc: str | None = None) -> tuple[int, str] | None:
    """The tightest memory limit over this process's cgroup and its parents -> (bytes, version)."""
    paths = _cgroup_paths(proc if proc is not None else _read(Path("/proc/self/cgroup")) or "")
    found = []
    if "memory" in paths and (root / "memory").is_dir():
        for folder in _upwards(root / "memory", paths["memory"]):
            value = _read(folder / "memory.limit_in_bytes")
            if value and value.isdigit() and int(value) < NO_LIMIT:
                found.append((int(value), "cgroup v1"))
    elif "" in paths:
        mount = root / "unified" if (root / "unified").is_dir() else root
        for folder in _upwards(mount, paths[""]):
            value = _read(folder / "memory.max")
            if value and value.isdigit():
                found.append((int(value), "cgroup v2"))
    return min(found) if found else None


def cgroup_cpus(root: Path = CGROUP, proc: str | None = None) -> tuple[float, str] | None:
    """The tightest CPU quota over this process's cgroup and its parents -> (CPUs, version)."""
    paths = _cgroup_paths(proc if proc is not None else _read(Path("/proc/self/cgroup")) or "")
    found = []
    mount = next((root / name for name in ("cpu", "cpu,cpuacct") if (root / name).is_dir()), None)
    if "cpu" in paths and mount is not None:
        for folder in _upwards(mount, paths["cpu"]):
            quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
            if quota and period and quota.isdigit() and period.isdigit() and int(period):
                found.append((int(quota) / int(period), "cgroup v1"))
    elif "" in paths:
        unified = root / "unified" if (root / "unified").is_dir() else root
        for folder in _upwards(unified, paths[""]):
            fields = (_read(folder / "cpu.max") or "").split()
            if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit() and int(fields[1]):
                found.append((int(fields[0]) / int(fields[1]), "cgroup v2"))
    return min(found) if found else None


def _env_positive(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return None


@functools.cache
def limits() -> Limits:
    """This host's memory and CPUs: the operator's variables, else the cgroup's, else the machine's."""
    machine_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    memory, memory_from = machine_memory, "machine"
    if (given := _env_positive("STOCKDEMO_MEMORY_MB")) is not None:
        memory, memory_from = given * MB, "STOCKDEMO_MEMORY_MB"
    elif (found := cgroup_memory()) is not None and found[0] < machine_memory:
        memory, memory_from = found
    cpus, cpus_from = len(os.sched_getaffinity(0)), "machine"
    if (given := _env_positive("STOCKDEMO_CPUS")) is not None:
        cpus, cpus_from = given, "STOCKDEMO_CPUS"
    elif (found := cgroup_cpus()) is not None and found[0] < cpus:
        cpus, cpus_from = max(1, math.floor(found[0])), found[1]  # 0.5 or 1.5 CPUs: one at a time
    return Limits(memory, cpus, memory_from, cpus_from)


def training_workers(host: Limits | None = None) -> int:
    """Workers for training runs: one per CPU, as many as the memory beyond the app's own holds;
    0 (runs in the server, one at a time) where not even the first worker fits."""
    host = host or limits()
    spare = host.memory_mb - SERVER_MB - FORKSERVER_MB
    if spare < 0:
        return 0
    return max(1, min(host.cpus, 1 + spare // WORKER_MB))


def sandbox_places(host: Limits | None = None) -> int:
    """Learners' runs at once in the sandbox: one per CPU, as many as the memory holds."""
    host = host or limits()
    by_memory = max(1, (host.memory_mb - SERVER_MB - FORKSERVER_MB) // CHILD_MB)
    return max(1, min(host.cpus, by_memory))


def cache_budget(host: Limits | None = None) -> int:
    """Bytes the caches of runs, pictures and learners' runs may hold together."""
    if (given := _env_positive("STOCKDEMO_CACHE_MB")) is not None:
        return given * MB
    host = host or limits()
    return int(min(CACHE_MAX_MB, max(CACHE_MIN_MB, host.memory_mb * CACHE_SHARE))) * MB


def memory_used() -> dict[str, float]:
    """MB in use now, for an operator: the cgroup's (v1 or v2) if the host has one, and its limit."""
    paths = _cgroup_paths(_read(Path("/proc/self/cgroup")) or "")
    used = None
    if "memory" in paths and (CGROUP / "memory").is_dir():
        folder = _upwards(CGROUP / "memory", paths["memory"])[0]
        used = _read(folder / "memory.usage_in_bytes")
    elif "" in paths:
        mount = CGROUP / "unified" if (CGROUP / "unified").is_dir() else CGROUP
        used = _read(_upwards(mount, paths[""])[0] / "memory.current")
    host = limits()
    out = {"limit_mb": round(host.memory / MB), "cpus": host.cpus}
    if used and used.isdigit():
        out["used_mb"] = round(int(used) / MB)
    return out


T = TypeVar("T")


class PerProcess(Generic[T]):
    """One ``make()`` for the whole server process, made on first use: its pools."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value

    def made(self) -> T | None:
        """The value if it was made, without making it (an operator's figures ask)."""
        return self._value
