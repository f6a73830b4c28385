# Tries: to read standard input until something arrives (a server's request, a terminal).
# Must: find nothing to read (standard input is empty) and end at a time limit.
# expect: limit:cpu_s|wall_s limit
import os
import sys

print(repr(sys.stdin.read()))
while not os.read(0, 1024):
    pass
