# Tries: to read the app's own files (its README).
# Must: be refused: only the empty working directory is readable.
# expect: refused read a file outside its working directory
print(open("__REPO__/README.md").read()[:200])
