"""One run of a learner's code, in a child forked by the fork server: walls, exec, graph, result.

``main`` is all the child does. It keeps only its two pipes (``/dev/null``
as stdin, stdout and stderr), walls itself in (``kernel.confine``), reads its
code from a third pipe if it was forked before the code came (a spare,
``watch.Spare``: the code is read only behind the walls), then runs the code
as a script under ``exec(compile(source, "<your code>", "exec"))`` with
``print`` going to the print pipe (``BoundedOutput``), takes the tensor the
script names ``predictions`` and records its autograd graph with
``stockdemo.graph.recorder`` (each node on the learner's line and loop
iteration). Each ``backward()`` (or ``torch.autograd.grad``) the code calls
is recorded too, just before it frees its graph: a training loop's graphs,
one per iteration (``graphs``; at most ``MAX_GRAPHS`` kept, all counted). The
result goes back as one JSON object on the result pipe (see ``protocol.py``);
both pipes are closed, then the process ends with ``os._exit``.

Nothing here is trusted by the fork server: the learner's code runs in this
process and may have changed any object in it. The fork server bounds and checks
every field it reads.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import errno
import io
import json
import linecache
import os
import random
import struct
import sys
import tempfile
import time
from typing import NoReturn

import numpy as np
import torch
from torch import nn

from stockdemo.forkserver import walls
from stockdemo.graph.recorder import CODE_FILE, GraphTooBig, LineRecorder, raw_graph
from stockdemo.i18n import N_
from stockdemo.sandbox import kernel
from stockdemo.sandbox.attempts import Attempts
from stockdemo.sandbox.limits import Limits
from stockdemo.sandbox.prefault import NONE, touch
from stockdemo.sandbox.words import sentence, to_wire, worded

FILENAME = CODE_FILE
# What the fork server imports for the learner (shared by every fork, so each run skips it);
# with Landlock a run may import anything else the interpreter has installed, itself.
PRELOADED = ("math", "random", "torch", "torch.nn", "torch.nn.functional")
# Loaded too, so that trying a socket, multiprocessing or a terminal meets the wall itself
# (socket, fork) rather than a module that cannot be loaded.
ALSO_LOADED = ("encodings.idna", "multiprocessing.popen_fork", "pty")
MAX_GRAPHS = 20  # graphs a run's backward() calls made that are kept to draw; the rest are counted
MAX_MESSAGE = 2000
MAX_TYPE = 80
SEED = 0  # every run starts from the same random state, so the same code draws the same graph


class OutputLimit(BaseException):
    """Printed more than the limit (a BaseException: ``except Exception`` does not swallow it)."""


class GraphLimit(BaseException):
    """Recorded more autograd nodes than the limit."""


class PredictionsError(Exception):
    """``predictions`` is missing, not a tensor, or has no grad_fn: said as Python or torch would."""

    def __init__(self, kind: str, said: dict, line: int | None) -> None:
        super().__init__(said["message"])
        self.kind, self.said, self.line = kind, said, line


class BoundedOutput(io.TextIOBase):
    """stdout and stderr of the run: text goes straight to the print pipe, up to ``limit`` bytes."""

    def __init__(self, fd: int, limit: int) -> None:
        super().__init__()
        self.fd, self.limit, self.sent, self.overflowed = fd, limit, 0, False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.overflowed:
            raise OutputLimit
        data = text.encode("utf-8", "replace")
        room = self.limit - self.sent
        if len(data) > room:
            self._send(data[:room])
            self.overflowed = True
            raise OutputLimit
        self._send(data)
        return len(text)

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        self.sent += len(data)


class BoundedRecorder(LineRecorder):
    """The general recorder (LineRecorder), on the learner's lines only, stopping the run past ``max_nodes``
    nodes made since the last backward(), and keeping the graph each backward() frees.

    ``namespace``: the script's globals, where the graphs' parameters get their names.
    ``graphs`` keeps the first ``MAX_GRAPHS`` while their nodes add up to at most ``max_nodes``;
    ``built`` counts them all; ``seqs`` holds each kept graph's sequence numbers.
    """

    def __init__(self, max_nodes: int, namespace: dict | None = None) -> None:
        super().__init__(is_callers=lambda filename: filename == FILENAME, on_backward=self._backward)
        self.max_nodes = max_nodes
        self.namespace = {} if namespace is None else namespace
        self.first = _newest_sequence_nr()
        self.graphs: list[dict] = []
        self.seqs: list[frozenset[int]] = []
        self.built = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs)
        if self.ends and self.ends[-1] - self.first > self.max_nodes:
            raise GraphLimit
        return out

    def _backward(self, root: torch.Tensor) -> None:
        self.built += 1
        self.first = _newest_sequence_nr()  # the graph is freed now: the next one counts afresh
        room = self.max_nodes - sum(len(g["nodes"]) for g in self.graphs)
        if len(self.graphs) >= MAX_GRAPHS or room <= 0:
            return
        try:
            graph = raw_graph(root, self, _parameters(self.namespace), max_nodes=room,
                              inputs=_data(self.namespace))
        except GraphTooBig:
            return  # counted, not drawn: the node limit is over every graph kept
        site = self._site(sys._getframe(1))
        _this_iteration(graph, site[3] if site else ())
        self.graphs.append(graph)
        self.seqs.append(frozenset(n["seq"] for n in graph["nodes"] if n["seq"] is not None))

    def kept(self, room: int, last: torch.Tensor | None) -> tuple[list[dict], bool]:
        """(The graphs to send, within ``room`` nodes all together: the first ones dropped, still
        counted; whether ``last``'s node is in the graph the last backward() freed)."""
        graphs = list(self.graphs)
        while graphs and sum(len(g["nodes"]) for g in graphs) > room:
            graphs.pop(0)
        freed = bool(last is not None and self.seqs and last.grad_fn._sequence_nr() in self.seqs[-1])
        return graphs, freed


def _this_iteration(graph: dict, around: tuple[tuple[str, int, int], ...]) -> None:
    """Leave out of each node's loops the iteration the backward() call is in (``around``: its
    loops, as ``LineRecorder._site`` gives them): one training step's graph then has the same
    node ids as the next one's, so the view keeps every node that stays in its place from one
    graph to the next. Nodes an earlier iteration made (a hidden state not detached) keep theirs."""
    now = {(filename, header): k for filename, header, k in around}
    if not now:
        return
    files = graph["files"]
    for node in graph["nodes"]:
        node["loops"] = [loop for loop in node["loops"] if now.get((files[loop[0]], loop[1])) != loop[2]]


def _newest_sequence_nr() -> int:
    """The sequence number autograd gives the next node, minus one (a node made and dropped)."""
    return (torch.zeros((), requires_grad=True) * 1).grad_fn._sequence_nr()


def main(source: str | None, limits: Limits, print_fd: int, result_fd: int, workdir: str,
         landlock_abi: int, parent_pid: int, request_fd: int = -1, warm_pages: np.ndarray = NONE) -> NoReturn:
    """The child's whole life (see the module docstring). Never returns. ``source`` None: a spare,
    forked before its code came, which copies ``warm_pages`` (``prefault``), walls itself in and
    then reads the code from ``request_fd``."""
    try:
        _keep_only(print_fd, result_fd, *(() if source is not None else (request_fd,)))
        if source is None:
            touch(warm_pages)
        try:
            walls = kernel.confine(workdir, limits.cpu_s, limits.memory_mb, landlock_abi, parent_pid,
                                   limits.file_mb)
        except Exception as err:  # noqa: BLE001 - never run code without every wall
            said = worded(sentence("not set up", error=str(err)))
            _send(result_fd, {"error": _error("unavailable", "OSError", said, None)})
            os._exit(3)
        if source is None:
            source = _code_from(request_fd)
        out = BoundedOutput(print_fd, limits.output_bytes)
        attempts = Attempts(workdir, frozenset(m.split(".")[0] for m in PRELOADED),
                            kernel.interpreter_dirs() if landlock_abi else ())
        os.environ["TMPDIR"] = tempfile.tempdir = workdir  # temporary files go in the run's folder
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)  # the warm-up's, under /tmp: torch's own again
        sys.stdout = sys.stderr = out
        sys.stdin = io.StringIO()
        attempts.install()
        result = run_source(source, limits, out, attempts)
        result["walls"] = walls
        _send(result_fd, result)
    finally:
        for fd in (print_fd, result_fd):  # closed before the exit: the answer need not wait for it
            with contextlib.suppress(OSError):
                os.close(fd)
        os._exit(0)  # no atexit handler or buffer of the fork server's may run here


def _code_from(fd: int) -> str:
    """A spare's code, as ``watch.Runs`` writes it: its length in 4 bytes, then its UTF-8. Ends the
    process quietly at end of file (the spare was let go)."""
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            os._exit(0)
        data += chunk
    os.close(fd)
    return data[4:].decode("utf-8", "surrogatepass")


def _keep_only(*fds: int) -> None:
    """/dev/null as 0, 1, 2; close every other descriptor the fork server had open, but ``fds``."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    walls.keep_only(0, 1, 2, *fds)


def run_source(source: str, limits: Limits, out: BoundedOutput, attempts: Attempts) -> dict:
    """Run the script and record its graphs -> the result's fields (protocol.py).

    The graph drawn is the one behind ``predictions`` (with a replay); the graphs the code's
    own backward() calls freed go with it (a script without ``predictions`` that called
    backward() has those alone).
    """
    started = time.perf_counter()
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    torch.manual_seed(SEED)
    random.seed(SEED)
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    error = graph = shape = None
    graphs: list[dict] = []
    freed = False
    lines = BoundedRecorder(limits.graph_nodes, namespace)
    try:
        code = compile(source, FILENAME, "exec", dont_inherit=True)
        with lines:
            try:
                exec(code, namespace)
            except SystemExit:
                pass  # the script ended itself, as `python script.py` would
        if "predictions" not in namespace and lines.graphs:
            graphs, _ = lines.kept(limits.graph_nodes, None)  # a training loop alone: its graphs
        else:
            predictions = _predictions(namespace, source)
            shape = list(predictions.shape)
            graph = raw_graph(predictions, lines, _parameters(namespace), max_nodes=limits.graph_nodes,
                              replay=True, inputs=_data(namespace))
            graphs, freed = lines.kept(limits.graph_nodes - len(graph["nodes"]), predictions)
    except BaseException as exc:  # noqa: BLE001 - every way the learner's code can end is reported
        error = describe(exc, limits, attempts)
        graphs, _ = lines.kept(limits.graph_nodes, None)
    namespace.clear()
    if out.overflowed:
        error = _error("limit", "OutputLimit", limits.stopped(
            "output_kb", N_("what your code printed first is kept.")), None, "output_kb")
    return {"error": error, "shape": shape, "graph": graph, "graphs": graphs, "built": lines.built,
            "graph_freed": freed,
            "refused": attempts.words(), "exec_s": time.perf_counter() - started}


def _predictions(namespace: dict, source: str) -> torch.Tensor:
    line = _assigned_line(source, "predictions")
    if "predictions" not in namespace:
        raise PredictionsError("NameError", worded(sentence("no predictions")), None)
    value = namespace["predictions"]
    if not isinstance(value, torch.Tensor):
        key = "not a tensor, no return" if value is None else "not a tensor"
        raise PredictionsError("TypeError", worded(sentence(key, type=type(value).__name__)), line)
    if value.grad_fn is None:
        raise PredictionsError("RuntimeError", worded(sentence("no grad")), line)
    return value


def _assigned_line(source: str, name: str) -> int | None:
    """The line of the script's last assignment to ``name`` (in ``with``, ``if``, loops; not in defs)."""
    line = None

    def visit(statements: list[ast.stmt]) -> None:
        nonlocal line
        for node in statements:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                line = node.lineno
            for field in ("body", "orelse", "finalbody", "handlers"):
                visit(getattr(node, field, []))

    visit(ast.parse(source).body)
    return line


def _parameters(namespace: dict) -> dict[str, torch.Tensor]:
    """Names for the graph's leaves: the script's modules' parameters, and its own tensors."""
    modules = [(k, v) for k, v in list(namespace.items())[:1000] if isinstance(v, nn.Module)]
    names: dict[str, torch.Tensor] = {}
    for var, module in modules:
        prefix = "" if len(modules) == 1 else f"{var}."
        for name, p in nn.Module.named_parameters(module):
            names.setdefault(prefix + name, p)
    for var, value in list(namespace.items())[:1000]:
        if isinstance(value, torch.Tensor) and value.requires_grad and value.grad_fn is None:
            names.setdefault(var, value)
    return names


def _data(namespace: dict) -> dict[str, torch.Tensor]:
    """The script's own tensors that need no gradient: its data (``x``), drawn where it enters."""
    return {k: v for k, v in list(namespace.items())[:1000]
            if type(v) is torch.Tensor and not v.requires_grad and not k.startswith("_")}


def describe(exc: BaseException, limits: Limits, attempts: Attempts) -> dict:
    """How the learner's code ended, as the result's ``error`` (protocol.py)."""
    line = _learner_line(exc)
    kind = type(exc).__name__[:MAX_TYPE]
    text = _text(exc)
    if isinstance(exc, OutputLimit):
        return _error("limit", kind, limits.stopped("output_kb", N_("what your code printed first is kept.")),
                      line, "output_kb")
    if isinstance(exc, GraphLimit | GraphTooBig):
        return _error("limit", "GraphLimit", limits.stopped(
            "graph_nodes", N_("your code recorded more autograd nodes than that.")), line, "graph_nodes")
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return _error("limit", kind, limits.stopped("file_mb", f"{kind}: {text}"), line, "file_mb")
    if isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "allocate memory" in text):
        return _error("limit", kind, limits.stopped("memory_mb", f"{kind}: {text}" if text else kind),
                      line, "memory_mb")
    if isinstance(exc, RecursionError):
        return _error("limit", kind, worded(sentence("recursion", calls=sys.getrecursionlimit(), error=text)),
                      line, "recursion")
    if isinstance(exc, PredictionsError):
        return _error("error", exc.kind, exc.said, exc.line)
    if isinstance(exc, SyntaxError):
        where = exc.lineno if exc.filename == FILENAME else None
        if where:
            said = worded(sentence("syntax", error=str(exc.msg), line=where, column=exc.offset or 0))
            return _error("error", kind, said, where)
        return _error("error", kind, text, where)
    refused = _refusal(exc, text, attempts)
    if refused:
        return _error("refused", kind, refused, line)
    return _error("error", kind, text, line)


def _refusal(exc: BaseException, text: str, attempts: Attempts) -> dict | None:
    """What the sandbox refused, in sentences of ``SAID`` (``worded``); None if it refused nothing."""
    last = attempts.last()
    if isinstance(exc, ImportError):
        last = attempts.last("load a module")
    outside = attempts.last("read a file outside") or attempts.last("write a file outside") or \
        attempts.last("list a folder outside")
    files = (sentence("files"),) if outside else ()
    if isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.EACCES):
        error = f"{text}." if files else text
        said = (sentence("refused", attempt=last[0], call=last[1], error=error) if last
                else sentence("refused a call", error=error))
        return worded(said, *files)
    if isinstance(exc, FileNotFoundError) and outside:
        return worded(sentence("python's", error=f"{type(exc).__name__}: {text}."), *files)
    if isinstance(exc, RuntimeError) and "can't start new thread" in text:
        return worded(sentence("refused a thread", error=text))
    if isinstance(exc, ImportError) and last:
        return worded(sentence("refused", attempt=last[0], call=last[1], error=f"{text}."),
                      sentence("no landlock", loaded=", ".join(PRELOADED)))
    return None


def _error(kind: str, type_: str, said: str | dict, line: int | None, limit: str | None = None) -> dict:
    """The result's ``error``: ``said``, Python's own words, or our sentences (``words.worded``)."""
    message, sentences = (said, None) if isinstance(said, str) else (said["message"], said["words"])
    return {"kind": kind, "limit": limit, "type": type_, "message": message[:MAX_MESSAGE], "line": line,
            "words": to_wire(sentences)}


def _learner_line(exc: BaseException) -> int | None:
    """The innermost line of the learner's code in the traceback (never a frame of ours)."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:MAX_MESSAGE]
    except Exception:  # the learner's own exception class may fail to print itself
        return f"<{type(exc).__name__} that could not be printed>"


def _send(fd: int, result: dict) -> None:
    try:
        data = json.dumps(result, separators=(",", ":")).encode()
    except (MemoryError, TypeError, ValueError):
        data = b'{"error":{"kind":"limit","limit":"memory_mb","type":"MemoryError",' \
               b'"message":"The result could not be sent: out of memory.","line":null}}'
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
