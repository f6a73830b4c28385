# Tries: to reach another run's folder: list the folder its own folder is in, then a sibling.
# Must: be refused: each run sees its own folder only.
# expect: refused no files but its own
import os

here = os.getcwd()
print(here)
for name in os.listdir(os.path.dirname(here)):
    print(open(os.path.join(os.path.dirname(here), name, "notes.txt")).read())
