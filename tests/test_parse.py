"""``stockdemo.graph.parse``: sessions' threads parse at once, and none of them raises."""

from __future__ import annotations

import gc
import sys
import threading
import time

from stockdemo.graph.parse import parse

SOURCE = ("def forward(self, x):\n    for t in range(3):\n"
          "        h = self.cell(x[:, t], h.detach())\n    return h\n") * 10


class Finalized:
    """Garbage whose collection runs Python code: the moment CPython may switch threads."""

    def __del__(self) -> None:
        time.sleep(0)


def test_four_threads_parsing_while_garbage_is_collected_never_raise():
    # With ast.parse itself, this raised "AST constructor recursion depth mismatch" in
    # each of five runs on CPython 3.11.7 (gh-106905).
    errors: list[str] = []

    def work() -> None:
        for _ in range(500):
            garbage = Finalized()
            garbage.me = garbage
            del garbage
            try:
                parse(SOURCE)
            except SystemError as error:
                errors.append(str(error))

    threshold, interval = gc.get_threshold(), sys.getswitchinterval()
    gc.set_threshold(50)
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.set_threshold(*threshold)
        sys.setswitchinterval(interval)
    assert errors == []
    assert [f.name for f in parse(SOURCE).body[:1]] == ["forward"]


def test_a_tracer_that_parses_code_a_collection_runs_inside_parse_does_not_wait_forever():
    # The full suite hung here: hypothesis's gc callback ran inside parse, LineRecorder's
    # tracer saw its lines and parsed its file, waiting for the lock its own thread held.
    ran: list[str] = []

    def callback(phase: str, info: dict) -> None:
        ran.append(phase)

    def tracer(frame, event, arg):
        if frame.f_code is callback.__code__:
            parse("x = 1")  # what the line tracer does for a frame of the caller's code
        return None

    def work() -> None:
        sys.settrace(tracer)
        try:
            parse(SOURCE * 20)
        finally:
            sys.settrace(None)

    threshold = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(1)
    try:
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join(timeout=60)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(callback)
    assert not thread.is_alive(), "parse waited for itself"
    assert ran  # a collection did run inside parse
