# Tries: execve straight through libc with ctypes, past every Python-level check.
# Must: be refused by the kernel's filter (execve returns EPERM); the marker never appears.
# expect: refused refused a system call
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
argv = (ctypes.c_char_p * 4)(b"/bin/sh", b"-c", b"touch __MARKER__", None)
if libc.execve(b"/bin/sh", argv, None) == -1:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
