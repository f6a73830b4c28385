# Tries: to read the app's own files (its README).
# Must: be refused: only its own folder and the interpreter's installation are readable.
# expect: refused read a file outside its own folder
print(open("__REPO__/README.md").read()[:200])
