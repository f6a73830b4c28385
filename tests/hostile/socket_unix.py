# Tries: a unix socket connection to a server on this machine (the test's socket file).
# Must: be refused; the test's unix socket is never connected to.
# expect: refused open a unix socket
import socket

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("__UNIX_PATH__")
s.sendall(b"hello from the sandbox")
