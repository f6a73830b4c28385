# Tries: to list the app's source folder, then read a module of it.
# Must: be refused: the app's folder is not the interpreter's installation.
# expect: refused no files but its own
import os

print(os.listdir("__REPO__/stockdemo"))
print(open("__REPO__/stockdemo/sandbox/kernel.py").read()[:200])
