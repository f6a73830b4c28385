# Tries: to sleep far longer than any run may last.
# Must: end at the wall-clock limit.
# expect: limit:wall_s wall-clock time
import time

time.sleep(10_000)
