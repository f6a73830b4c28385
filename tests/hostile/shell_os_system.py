# Tries: a shell command through os.system, to create a file outside the sandbox.
# Must: be refused (no new process, no exec); the marker file never appears.
# expect: error run a shell command
import os

status = os.system("touch __MARKER__")
print("os.system returned", status)
