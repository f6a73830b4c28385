# Tries: to print the environment, hoping for the server's variables (its secret).
# Must: show only the sandbox's own few variables; the server's secret is never printed;
#   asking the parent's /proc entry for more is refused.
# expect: refused read a file outside its own folder
import os

print(dict(os.environ))
print(os.environ.get("__SECRET_NAME__", "no secret here"))
print(open(f"/proc/{os.getppid()}/environ", "rb").read())
