# Tries: to fill the disk from its own folder: one file written past the file size limit.
# Must: be stopped at the file size limit (RLIMIT_FSIZE, the kernel's): the folder is removed with the run.
# expect: limit:file_mb file size
with open("scratch.bin", "wb") as f:
    for _ in range(64):
        f.write(b"x" * 2**20)
