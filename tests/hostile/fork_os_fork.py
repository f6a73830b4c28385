# Tries: os.fork, so a copy of the run escapes its wall-clock timer.
# Must: be refused: no new process.
# expect: refused start a new process
import os

if os.fork() == 0:
    open("__MARKER__", "w").write("forked")
