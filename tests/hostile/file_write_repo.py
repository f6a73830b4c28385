# Tries: to write into the app's own folder (change its code).
# Must: be refused; no file appears in the repository.
# expect: refused write a file
with open("__REPO__/stockdemo/__init__.py", "a") as f:
    f.write("\nprint('owned')\n")
