# Tries: a symbolic link from the working directory to /etc/passwd, then reading through it.
# Must: be refused: no link is made.
# expect: refused make a link
import os

os.symlink("/etc/passwd", "passwd")
print(open("passwd").read())
