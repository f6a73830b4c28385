"""Python source to its syntax tree, one thread at a time: ``parse`` is ``ast.parse`` under a lock.

CPython 3.11.7 (this box's) keeps the syntax tree converter's recursion count in state
every thread shares (gh-106905, fixed upstream): a garbage collection inside one
thread's ``ast.parse`` can switch to another thread's, and one of them then raises
``SystemError: AST constructor recursion depth mismatch``. A server parses in each
session's thread (the code panel's functions, a loop's name), so a class pressing Run at
once hit it: a student's page showed the exception (bench/class_challenge.py, 60 programs).

A line tracer (``graph/lines.py``) is off while a tree is made: a collection inside
``ast.parse`` may run Python code (a ``gc.callbacks`` entry, a ``__del__``), the tracer would
parse that code's file from inside this parse, and wait for the lock this thread holds.
"""

from __future__ import annotations

import ast
import sys
import threading

_ONE_AT_A_TIME = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, never beside another thread's and with this thread's
    tracer off; raises as it does."""
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        with _ONE_AT_A_TIME:
            return ast.parse(source, filename)
    finally:
        sys.settrace(tracer)
