# Tries: to read the server's environment from /proc/<server pid>/environ (its secrets).
# Must: be refused; no variable of the server is ever printed.
# expect: refused read a file outside its own folder
print(open("/proc/__SERVER_PID__/environ", "rb").read().replace(b"\0", b"\n").decode())
