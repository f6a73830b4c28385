# Tries: to kill every process it may reach: its process group, its parent's group, and -1.
# Must: be refused.
# expect: refused send a signal
import os
import signal

for target in (0, os.getppid()):
    try:
        os.killpg(target, signal.SIGKILL)
    except OSError as err:
        print("killpg", target, err)
os.kill(-1, signal.SIGKILL)
