# Tries: to replace the Python process with a shell (os.execv).
# Must: be refused: execve is not allowed, and the marker file never appears.
# expect: refused replace itself with another program
import os

os.execv("/bin/sh", ["/bin/sh", "-c", "touch __MARKER__"])
