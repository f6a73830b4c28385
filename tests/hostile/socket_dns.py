# Tries: a name lookup (DNS), which needs /etc/resolv.conf and a socket.
# Must: fail, with the refusal named.
# expect: error look up a network address
import socket

print(socket.getaddrinfo("example.com", 80))
