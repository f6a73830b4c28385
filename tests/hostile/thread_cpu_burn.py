# Tries: threads that burn CPU alongside the main thread (to multiply its CPU share).
# Must: be refused: no thread starts.
# expect: refused start a thread
import threading


def burn():
    while True:
        pass


threads = [threading.Thread(target=burn) for _ in range(8)]
for t in threads:
    t.start()
burn()
