# Tries: io_uring_setup, a way round system call filters that watch single calls.
# Must: be refused by the kernel (EPERM).
# expect: refused refused a system call
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
if libc.syscall(425, 8, params) == -1:  # io_uring_setup
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
