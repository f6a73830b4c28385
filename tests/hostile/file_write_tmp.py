# Tries: to leave a file behind in a shared folder (the marker path, in /tmp).
# Must: be refused; the marker file never appears.
# expect: refused write a file
with open("__MARKER__", "w") as f:
    f.write("left behind")
