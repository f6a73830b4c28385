# Tries: os.posix_spawn of /bin/touch (glibc spawns with clone3 or vfork, then execve).
# Must: be refused; the marker file never appears.
# expect: refused start another program
import os

os.posix_spawn("/bin/touch", ["/bin/touch", "__MARKER__"], {})
