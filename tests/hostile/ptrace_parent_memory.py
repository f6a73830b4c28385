# Tries: to read the fork server's memory (process_vm_readv, then ptrace attach).
# Must: be refused by the kernel (EPERM) both ways.
# expect: refused refused a system call
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(64)
local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
remote = (ctypes.c_void_p * 2)(0x400000, 64)
if libc.syscall(310, os.getppid(), local, 1, remote, 1, 0) == -1:  # process_vm_readv
    print("process_vm_readv:", os.strerror(ctypes.get_errno()))
if libc.ptrace(16, os.getppid(), None, None) == -1:  # PTRACE_ATTACH
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
