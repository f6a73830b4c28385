# Tries: to grow a list of 10 MB buffers until the machine runs out of memory.
# Must: end at the memory limit; what it printed before stays.
# expect: limit:memory_mb memory
chunks = []
print("growing")
while True:
    chunks.append(bytearray(10**7))
