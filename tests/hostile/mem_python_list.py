# Tries: one huge Python list (80 GB of pointers).
# Must: end at the memory limit.
# expect: limit:memory_mb memory
x = [0] * 10**10
