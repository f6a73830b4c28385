# Tries: to kill the fork server that forked it (and with it every run).
# Must: be refused; the pool serves the next run.
# expect: refused send a signal to another process
import os
import signal

os.kill(os.getppid(), signal.SIGKILL)
