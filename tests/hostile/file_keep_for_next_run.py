# Tries: to keep a file for the next run: in its own folder (removed with the run), then beside it.
# Must: find nothing an earlier run left, and be refused outside its own folder.
# expect: refused write a file outside its own folder
import os

if os.path.exists("kept.txt") or os.listdir("."):
    raise RuntimeError("an earlier run's file is here")
with open("kept.txt", "w") as f:
    f.write("for the next run")
with open(os.path.join(os.path.dirname(os.getcwd()), "kept.txt"), "w") as f:
    f.write("for the next run")
