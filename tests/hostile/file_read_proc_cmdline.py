# Tries: to read the server's command line from /proc/<server pid>/cmdline.
# Must: be refused.
# expect: refused read a file outside its own folder
print(open("/proc/__SERVER_PID__/cmdline", "rb").read())
