# Tries: to lift Python's recursion limit and recurse until the C stack overflows.
# Must: end as a crash in native code (a signal), or at the memory limit, not take the server down.
# expect: crash|limit:SIGSEGV|memory_mb|cpu_s|wall_s crashed|limit
import sys

sys.setrecursionlimit(10**8)


def down(n):
    return down(n + 1)


down(0)
