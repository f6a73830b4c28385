"""The pages a run will write, copied while a spare waits for its code instead of during its run.

A child forked from the warm fork server shares its memory, and the kernel copies a page at
the child's first write to it: refcounts of torch's and Python's objects, the allocators'
free lists. A seed run wrote about 2,800 of them, most of the CPU it spent (in a forked child
25 ms, 3,200 page faults; after ``touch`` 16 ms, 530; ``bench/bench_press.py``). The fork
server learns once which pages a seed run writes (``pages_written``, in a probe child: its
pages that became its own during the run, from ``/proc/self/pagemap``); each spare has the
kernel copy them (``touch``) before its walls go up, so the copies are made while it waits.
A page the learner's code would not have written is only a copy more (about 11 MB a spare);
one it writes and the seed did not is copied in its run as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Callable

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")
NONE = np.empty(0, dtype=np.uint64)
_PRESENT, _EXCLUSIVE = np.uint64(1 << 63), np.uint64(1 << 56)  # pagemap's bits (kernel 4.2 on)
_POPULATE_WRITE = 23  # MADV_POPULATE_WRITE, linux/mman.h
_LIBC = ctypes.CDLL(None, use_errno=True)


def writable() -> list[tuple[int, int]]:
    """This process's private writable mappings, as (start, end) addresses."""
    regions = []
    with open("/proc/self/maps", "rb") as maps:
        for line in maps:
            span, perms = line.split()[:2]
            if perms.startswith(b"rw") and perms.endswith(b"p"):
                start, end = (int(x, 16) for x in span.split(b"-"))
                regions.append((start, end))
    return regions


def own_pages(regions: list[tuple[int, int]]) -> np.ndarray:
    """The page numbers in ``regions`` mapped by this process alone (copied or new since the fork)."""
    found = [NONE]
    fd = os.open("/proc/self/pagemap", os.O_RDONLY)
    try:
        for start, end in regions:
            raw = os.pread(fd, (end - start) // PAGE * 8, start // PAGE * 8)
            entries = np.frombuffer(raw, dtype=np.uint64)
            own = (entries & _PRESENT).astype(bool) & (entries & _EXCLUSIVE).astype(bool)
            found.append(np.flatnonzero(own).astype(np.uint64) + np.uint64(start // PAGE))
    finally:
        os.close(fd)
    return np.concatenate(found)


def pages_written(run: Callable[[], object]) -> np.ndarray:
    """-> the sorted page numbers ``run()`` writes in a child forked from this process (it runs
    there, never here); none where the kernel does not say (no pagemap)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the probe: our own code (the seed), never a learner's
        status = 1
        with contextlib.suppress(BaseException):
            regions = writable()
            before = own_pages(regions)
            run()
            os.write(write_end, np.setdiff1d(own_pages(regions), before).tobytes())
            status = 0
        os._exit(status)
    os.close(write_end)
    chunks = []
    with contextlib.suppress(OSError):
        while chunk := os.read(read_end, 1 << 20):
            chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    if status != 0 or len(data) % 8:
        return NONE
    return np.frombuffer(data, dtype=np.uint64)


def touch(pages: np.ndarray) -> int:
    """Have the kernel copy each of ``pages`` still mapped writable here, as a write would, without
    writing (``MADV_POPULATE_WRITE``, Linux 5.14 on: no byte changes, so no value read a moment
    before can be written back stale) -> how many; none where the kernel cannot."""
    touched = 0
    for start, end in writable():
        lo, hi = np.searchsorted(pages, [start // PAGE, end // PAGE])
        for first, count in _runs(pages[lo:hi]):
            if _LIBC.madvise(ctypes.c_void_p(first * PAGE), ctypes.c_size_t(count * PAGE), _POPULATE_WRITE):
                return touched  # an older kernel: the run copies its pages itself, as before
            touched += count
    return touched


def _runs(pages: np.ndarray) -> list[tuple[int, int]]:
    """Sorted page numbers as runs of consecutive pages: (first, how many)."""
    if not len(pages):
        return []
    breaks = np.flatnonzero(np.diff(pages) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [len(pages)]))
    return [(int(pages[a]), int(b - a)) for a, b in zip(starts, ends, strict=True)]
