# Tries: a shell on a pseudo-terminal (pty.spawn: forkpty, then exec).
# Must: be refused (forkpty, and opening a terminal for writing, are not allowed); Python then
#   says it is "out of pty devices".
# expect: error|refused sandbox refused
import pty

pty.spawn(["/bin/sh", "-c", "touch __MARKER__"])
