# Tries: a UDP datagram to a socket listening on this machine (the test's).
# Must: be refused; the test's UDP socket receives nothing.
# expect: refused open a network socket
import socket

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"hello from the sandbox", ("127.0.0.1", int("__UDP_PORT__")))
