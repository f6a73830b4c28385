# Tries: to block forever on a lock it already holds.
# Must: end at the wall-clock limit.
# expect: limit:wall_s wall-clock time
import threading

lock = threading.Lock()
lock.acquire()
lock.acquire()
