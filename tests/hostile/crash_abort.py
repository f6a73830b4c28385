# Tries: os.abort() (SIGABRT to itself).
# Must: end as a crash named by its signal; the pool serves the next run.
# expect: crash:SIGABRT abort
import os

os.abort()
