# Tries: a TCP connection to a server listening on this machine (the test's socket).
# Must: be refused (no socket at all); the listening socket is never connected to.
# expect: refused open a network socket
import socket

s = socket.create_connection(("127.0.0.1", int("__PORT__")), timeout=1)
s.sendall(b"hello from the sandbox")
