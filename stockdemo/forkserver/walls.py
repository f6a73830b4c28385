"""The walls every child of the fork server builds from, whatever its kind (and the process itself).

A sandbox run adds its own on top (``stockdemo/sandbox/kernel.py``: Landlock, seccomp, its
rlimits); a training worker takes these with its own values (``stockdemo/train/worker.py``).
"""

from __future__ import annotations

import os


def keep_only(*fds: int) -> None:
    """Close every descriptor this process has open but ``fds`` (a child: what its fork server held)."""
    keep = sorted({-1, *fds})
    for low, high in zip(keep, [*keep[1:], os.sysconf("SC_OPEN_MAX")], strict=True):
        if low + 1 < high:  # an empty range is not passed on: close_range(0, -1) would close them all
            os.closerange(low + 1, high)


def raise_oom_score_adj(value: int) -> bool:
    """Make this process (and what it forks from now on) the kernel's first choice when memory runs out.

    Any process may raise its own score; only a lower one needs privileges. -> False where
    /proc does not allow it (not Linux): the process carries on.
    """
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(value))
        return True
    except OSError:
        return False


def vm_bytes() -> int:
    """This process's address space now (VmSize), from /proc/self/statm."""
    with open("/proc/self/statm", "rb") as f:  # bytes: decoding could need a module not loaded
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
