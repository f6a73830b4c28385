# Tries: to reach the server's /proc entry through /proc/self/.. (an escape by path).
# Must: be refused; no variable of the server is ever printed.
# expect: refused read a file outside its own folder
print(open("/proc/self/../__SERVER_PID__/environ", "rb").read().replace(b"\0", b"\n").decode())
