# Tries: to crash the interpreter: a null pointer read through ctypes.
# Must: end as a crash in native code, named by its signal; the pool serves the next run.
# expect: crash:SIGSEGV segmentation fault
import ctypes

print("before the crash")
ctypes.string_at(0)
