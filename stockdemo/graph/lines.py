"""Which line of *your* code made each autograd node, and in which iteration of each loop.

``LineRecorder`` (a ``TorchFunctionMode``) sees every torch call made from Python on this
thread: a call's nodes are those created while it ran, which sequence numbers tell. For each
call that made nodes it keeps the innermost frame of the caller's code (not torch's, not the
standard library's, not this package's recorder) and, with a line tracer on the caller's
frames only (``sys.settrace``), the iteration of every loop around that line. Torch's own
frames are never traced line by line. ``stockdemo.graph.recorder.raw_graph`` reads it into
the record.
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
import sysconfig
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache

import torch
from torch.overrides import TorchFunctionMode

from stockdemo.graph.data import DataNotes
from stockdemo.graph.parse import parse

_SKIPPED_DIRS = tuple(os.path.dirname(p) + os.sep for p in (torch.__file__, os.__file__))
_SKIPPED_DIRS += (sysconfig.get_paths()["stdlib"] + os.sep,)
_RECORDER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep  # this folder: the recorder's own frames


def is_callers_file(filename: str) -> bool:
    """True for code of the caller's (a script, a notebook cell, a model's module); False for
    torch's, the standard library's and the recorder's own frames."""
    return not filename.startswith((*_SKIPPED_DIRS, _RECORDER_DIR))


@lru_cache(maxsize=256)
def _loops_of(filename: str, source: str, offset: int) -> dict[int, tuple[int, ...]] | None:
    """line -> the loop headers around it, outermost first; each header maps to itself too.

    ``source`` is the file's text as ``linecache`` holds it (the sandbox registers the
    learner's code there; IPython registers each cell), or one function's part of it whose
    first line is line ``offset + 1`` of the file. None where it does not parse.
    """
    try:
        tree = parse(source, filename)
    except (SyntaxError, ValueError, SystemError, RecursionError):  # SystemError: 3.11.7, a deep stack
        return None
    around: dict[int, tuple[int, ...]] = {}

    # Loops are statements, so only statement lists are walked (the expressions in them are
    # most of a file's nodes): a body, an else, a finally, an except's or a case's body.
    def visit(statements: list, outer: tuple[int, ...]) -> None:
        for node in statements:
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                inner = (*outer, node.lineno + offset)
                last = max(getattr(n, "end_lineno", node.lineno) or node.lineno for n in node.body)
                for line in range(node.lineno, last + 1):
                    around[line + offset] = inner
                visit(node.body, inner)
                visit(node.orelse, outer)
                continue
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inside = getattr(node, field, None)
                if isinstance(inside, list):
                    visit(inside, outer)

    visit(tree.body, ())
    return around


def _function_source(code, lines: list[str]) -> tuple[str, int] | None:
    """The part of the file that is ``code``'s function (or class body), as parseable text,
    and the file's line number just before it; None for a module's code (the whole file)."""
    first = code.co_firstlineno  # a decorated function's first decorator
    if code.co_name == "<module>" or not 0 < first <= len(lines):
        return None
    last = max((line for *_, line in code.co_lines() if line is not None), default=first)
    head = lines[first - 1]
    indent = len(head) - len(head.lstrip())
    # The last line that runs may open a bracket closed on the lines below: those are
    # indented deeper than the def, or blank.
    while last < len(lines) and (not lines[last].strip()
                                 or len(lines[last]) - len(lines[last].lstrip()) > indent):
        last += 1
    block = "".join(lines[first - 1:last])
    return ("if 1:\n" + block, first - 2) if indent else (block, first - 1)


_LAST_PARSED: dict[object, tuple[list[str] | None, dict[int, tuple[int, ...]]]] = {}


def _code_loops(code) -> dict[int, tuple[int, ...]]:
    """``_loops_of`` for the lines of the function ``code`` runs (a code object's).

    Only that function is parsed: a model's module may be thousands of lines (a notebook's
    model from a library, the benchmark's zoo), and parsing all of it cost more than the run.
    """
    filename = code.co_filename
    entry = linecache.cache.get(filename)
    held = entry[2] if entry is not None and len(entry) > 2 else None
    seen = _LAST_PARSED.get(code)
    if seen is not None and seen[0] is held:  # the tracer asks on every line: no re-read
        return seen[1]
    loops: dict[int, tuple[int, ...]] | None = {}
    lines = linecache.getlines(filename)
    # A lambda's or a comprehension's code holds no loop statement.
    if lines and (not code.co_name.startswith("<") or code.co_name == "<module>"):
        part = _function_source(code, lines)
        loops = _loops_of(filename, *part) if part else None
        if loops is None:  # a module's code, or a function cut wrong: the whole file
            loops = _loops_of(filename, "".join(lines), 0)
    if len(_LAST_PARSED) > 256:
        _LAST_PARSED.clear()
    entry = linecache.cache.get(filename)  # getlines may have read the file just now
    _LAST_PARSED[code] = (entry[2] if entry is not None and len(entry) > 2 else None, loops or {})
    return loops or {}


Site = tuple[str, int, str, tuple[tuple[str, int, int], ...]]  # file, line, function, loops


class LineRecorder(TorchFunctionMode):
    """While active on this thread: for each torch call that created autograd nodes, where
    in the caller's code it ran and in which iteration of each loop around it."""

    def __init__(self, is_callers: Callable[[str], bool] = is_callers_file, loops: bool = True,
                 on_backward: Callable[[torch.Tensor], None] | None = None) -> None:
        """``loops`` False: no line tracer, so no iterations (a run whose steps are known otherwise).
        ``on_backward``: called with the root tensor just before each ``backward()`` or
        ``torch.autograd.grad`` runs, while the graph it will free is still whole."""
        super().__init__()
        self.is_callers = is_callers
        self.loops = loops
        self.on_backward = on_backward
        self.ends: list[int] = []  # the newest sequence number each recorded call made
        self.sites: list[Site | None] = []
        self._theirs: dict[object, bool] = {}  # code object -> is it the caller's?
        self._counts: dict[object, dict[int, int]] = {}  # frame -> {loop header: iteration}
        self._previous_trace = None
        self.data = DataNotes()  # where data entered: stockdemo.graph.data

    # -- the line tracer: counts loop iterations in the caller's frames only -------------
    def _callers(self, code) -> bool:
        mine = self._theirs.get(code)
        if mine is None:
            mine = self._theirs[code] = self.is_callers(code.co_filename)
        return mine

    def _global_trace(self, frame, event, arg):
        return self._local_trace if event == "call" and self._callers(frame.f_code) else None

    def _local_trace(self, frame, event, arg):
        if event == "line":
            loops = _code_loops(frame.f_code)
            line = frame.f_lineno
            if loops.get(line, ())[-1:] == (line,):  # a loop's header: a new iteration
                counts = self._counts.setdefault(frame, {})
                counts[line] = counts.get(line, -1) + 1
                for header in [h for h in counts if h != line and line in loops.get(h, ())]:
                    del counts[header]  # a loop inside this one starts again
        elif event == "return":
            self._counts.pop(frame, None)
        return self._local_trace

    def __enter__(self):
        if not self.loops:
            return super().__enter__()
        self._previous_trace = sys.gettrace()
        sys.settrace(self._global_trace)
        frame = sys._getframe(1)
        while frame is not None:  # frames already running trace their lines from now on
            if self._callers(frame.f_code):
                frame.f_trace = self._local_trace
            frame = frame.f_back
        return super().__enter__()

    def __exit__(self, *exc):
        if not self.loops:
            return super().__exit__(*exc)
        sys.settrace(self._previous_trace)
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_trace is self._local_trace:
                frame.f_trace = None
            frame = frame.f_back
        self._counts.clear()
        return super().__exit__(*exc)

    # -- the torch calls ------------------------------------------------------------------
    # Recording must change nothing the code does. So it reads only what torch itself would
    # read next: no grad_fn under no_grad or inference mode (no node can be made there, and
    # asking a view made there for one runs autograd's rebase check, which raises), and a
    # grad_fn that cannot be read is no node (the code meets the same error when it uses it).
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.on_backward is not None and func in _BACKWARDS:
            root = _root(args[0] if args else (kwargs or {}).get("tensors", (kwargs or {}).get("outputs")))
            if root is not None:
                self.on_backward(root)
        out = func(*args, **(kwargs or {}))
        if not torch.is_grad_enabled():
            return out
        last = self.ends[-1] if self.ends else -1
        newest = last
        made = out if isinstance(out, (tuple, list)) else (out,)
        if args and isinstance(args[0], torch.Tensor) and (out is args[0] or func in _SETITEM):
            made = (*made, args[0])  # in place: the changed tensor's new grad_fn
        for t in made:
            fn = _grad_fn(t)
            if fn is not None:
                newest = max(newest, fn._sequence_nr())
        if newest > last:
            self.ends.append(newest)
            self.sites.append(self._site(sys._getframe(1)))
            self.data.took(args, kwargs, len(self.ends) - 1)
        else:
            self.data.computed(func, args, kwargs, out)
        return out

    def _site(self, frame) -> Site | None:
        """(file, line, function, loops) of the innermost caller's frame, loops from the outermost."""
        where = None
        loops: list[tuple[str, int, int]] = []
        while frame is not None:
            if self._callers(frame.f_code):
                filename, line = frame.f_code.co_filename, frame.f_lineno
                if where is None:
                    where = (filename, line, frame.f_code.co_name)
                counts = self._counts.get(frame, {})
                around = _code_loops(frame.f_code).get(line, ())
                loops[:0] = [(filename, h, counts[h]) for h in around if h in counts]
            frame = frame.f_back
        return None if where is None else (*where, tuple(loops))

    def site_of(self, sequence_nr: int) -> Site | None:
        """Where the node numbered ``sequence_nr`` was made: the first call that reached it."""
        k = bisect_left(self.ends, sequence_nr)
        return self.sites[k] if k < len(self.sites) else None


_BACKWARDS = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)
_SETITEM = (torch.Tensor.__setitem__,)


def _grad_fn(t: object):
    """``t.grad_fn``, or None for anything else and for a grad_fn autograd refuses to give."""
    if not isinstance(t, torch.Tensor):
        return None
    try:
        return t.grad_fn
    except RuntimeError:
        return None


def _root(tensors: object) -> torch.Tensor | None:
    """The first tensor with a grad_fn among what backward() or grad() was given."""
    for t in tensors if isinstance(tensors, (tuple, list)) else (tensors,):
        if _grad_fn(t) is not None:
            return t
    return None
