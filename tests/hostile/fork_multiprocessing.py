# Tries: a multiprocessing.Process that writes a file.
# Must: be refused: no new process (multiprocessing's first call, os.pipe, is refused already).
# expect: refused sandbox refused
import multiprocessing


def escape():
    open("__MARKER__", "w").write("escaped")


p = multiprocessing.Process(target=escape)
p.start()
p.join()
