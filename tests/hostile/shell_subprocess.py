# Tries: subprocess.run of /bin/sh, to create a file outside the sandbox.
# Must: be refused with a message saying the sandbox refused to start another program.
# expect: refused start another program
import subprocess

subprocess.run(["/bin/sh", "-c", "touch __MARKER__"], check=True)
