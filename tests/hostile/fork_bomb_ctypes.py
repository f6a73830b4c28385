# Tries: a fork bomb through libc's fork() with ctypes.
# Must: be refused by the kernel at the first fork (EPERM).
# expect: refused refused a system call
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
for _ in range(1000):
    if libc.fork() == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
