# Tries: to write past the print limit straight into every open file descriptor, bypassing print.
# Must: end at the printed-text limit (the parent counts what reaches it), nothing else written.
# expect: limit:output_kb printed text
import os

while True:
    for fd in range(3, 1024):  # the pipes are numbered after whatever the fork server holds open
        try:
            os.write(fd, b"flood " * 10_000)
        except OSError:
            pass
