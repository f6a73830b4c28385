# Tries: an endless loop.
# Must: end at the CPU limit (the kernel kills it), or the wall clock on a box too busy
#   to give it its CPU seconds first.
# expect: limit:cpu_s|wall_s limit
while True:
    pass
