# Tries: to read the machine's users (/etc/passwd).
# Must: be refused with Python's own PermissionError and the line that the sandbox has no files but its own.
# expect: refused no files but its own
print(open("/etc/passwd").read()[:200])
