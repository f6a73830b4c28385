# Tries: to append a user to /etc/passwd.
# Must: be refused (no file opened for writing); /etc/passwd is unchanged.
# expect: refused write a file
with open("/etc/passwd", "a") as f:
    f.write("intruder::0:0::/:/bin/sh\n")
