# Tries: kill(parent, SIGKILL) straight through libc with ctypes.
# Must: be refused by the kernel (EPERM).
# expect: refused refused a system call
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
if libc.kill(os.getppid(), 9) == -1:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
