# Tries: to write a file in its own working directory (a disk filler would start here).
# Must: be refused: nothing is written anywhere, the working directory stays empty.
# expect: refused write a file
with open("scratch.bin", "wb") as f:
    f.write(b"x" * 1024)
