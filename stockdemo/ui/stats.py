"""What an operator watches on a small host: memory used and allowed, the caches, the pools.

Served as JSON at ``/_stockdemo/stats`` by ``deploy/replica_app.py`` (``make serve``, the
image); the figures are read when asked, nothing is kept.
"""

from __future__ import annotations

import os

from stockdemo import host
from stockdemo.forkserver import client
from stockdemo.sandbox import pool
from stockdemo.train import pool as workers
from stockdemo.ui.caches import held_status


def pss_mb(pid: int) -> float | None:
    """Proportional set size of ``pid`` in MB (shared pages split between their users)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def stats() -> dict:
    """The host's limits and use, this server's PSS, the caches' bytes, the fork server's PSS
    and the pools' state."""
    limits = host.limits()
    out: dict = {
        "host": {**host.memory_used(), "memory_from": limits.memory_from, "cpus_from": limits.cpus_from},
        "server_pss_mb": pss_mb(os.getpid()),
        "caches": held_status(),
    }
    forks = client.SHARED.made()
    if forks is not None:
        out["forkserver"] = {"pid": forks.pid(), "pss_mb": pss_mb(forks.pid() or -1)}
    training = workers.SHARED.made()
    if training is not None:
        out["training"] = {**training.status(), "worker_pss_mb": [pss_mb(p) for p in training.worker_pids()]}
    sandbox = pool.SHARED.made()
    if sandbox is not None:
        status = sandbox.status()
        out["sandbox"] = {k: status[k] for k in ("ready", "running", "waiting", "slots")}
    return out
