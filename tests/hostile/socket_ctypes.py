# Tries: socket() straight through libc with ctypes, past Python's socket module.
# Must: be refused by the kernel (EPERM); the listening socket is never connected to.
# expect: refused refused a system call
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
fd = libc.socket(2, 1, 0)  # AF_INET, SOCK_STREAM
if fd == -1:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
