"""Any model's autograd graph, each node tagged with the line of *your* code that made it.

The Playground's graph (``stockdemo.graph``) knows the StockPredictor's steps and layers.
Learners' code in the sandbox and any model in a notebook have no such shape, so this
module records what a run itself says: for each autograd node, the innermost frame of
the caller's code (not torch's, not the standard library's) that was running when the
node was made, and the iteration of every loop around that line.

    with LineRecorder() as lines:
        predictions = model(x)
    raw = raw_graph(predictions, lines, dict(model.named_parameters()))

``raw`` is plain JSON-able data, the contract with whoever lays it out (the sandbox worker
sends it over a pipe; the notebook widget and the page lay it out):

- ``nodes``: one per autograd node, the output's ``grad_fn`` first (a breadth-first walk
  of ``next_functions``); each ``{"op", "kind", "seq", "shape", "param", "file", "line",
  "loops"}``:
  ``op``, autograd's own class name (``"AddmmBackward0"``, ``"AccumulateGrad"``);
  ``kind``, ``"op"``, ``"parameter"`` (a leaf that is a named parameter) or ``"leaf"``
  (any other tensor that requires grad); ``seq``, the creation order
  (``grad_fn._sequence_nr()``), None for leaves; ``shape``, the node's output shape
  (a leaf's own) or None; ``param``, the parameter's name or None; ``file``, an index
  into ``files`` or None (made by no code of the caller's, e.g. inside a C++ kernel);
  ``line``, the 1-based line in that file, or None; ``loops``, the loops around that
  line as ``[file index, loop header line, iteration]`` from the outermost caller frame
  to the innermost, each iteration 0-based (a loop whose start was not seen, because it
  was already running when the recorder started, is left out).
- ``edges``: ``[src, dst]`` node indices in the forward direction (``src`` fed ``dst``);
  one per input slot of ``dst``, so a node used twice by one op gives two edges.
- ``files``: the file names the nodes point into (``"<your code>"`` in the sandbox, a
  notebook cell's file in Jupyter); ``texts``: ``{"file index:line": stripped text}``
  for every line a node points to, and every loop header around one.
- ``output_shape``: the output's shape.
- ``inputs`` (when ``raw_graph`` is given named tensors): where data entered the graph, as
  ``{"name", "shape", "to", "steps"}`` (``stockdemo.graph.data``): a tensor that needs no
  gradient (the learner's ``x``), and for each torch call that took it (a view of it, or
  what was computed from it alone), the index of the call's first node with an empty input
  slot (data has no edge in autograd), else of its first node; and the time steps each took.

The recorder uses a ``TorchFunctionMode`` (every torch call made from Python, this thread
only: a call's nodes are those created while it ran, which sequence numbers tell) and a
line tracer on the caller's frames only (``sys.settrace``), which counts each loop's
iterations. Torch's own frames are never traced line by line.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import os
import sys
import sysconfig
from bisect import bisect_left
from collections.abc import Callable, Mapping
from functools import lru_cache

import torch
from torch.overrides import TorchFunctionMode

from stockdemo.graph.data import DataNotes, inputs_of
from stockdemo.graph.parse import parse

CODE_FILE = "<your code>"  # the file name learners' code is compiled under, in the sandbox
NO_SEQUENCE = 2**64 - 1  # what _sequence_nr() says of an AccumulateGrad
_SKIPPED_DIRS = tuple(os.path.dirname(p) + os.sep for p in (torch.__file__, os.__file__))
_SKIPPED_DIRS += (sysconfig.get_paths()["stdlib"] + os.sep,)


class GraphTooBig(Exception):
    """The walk met more autograd nodes than it may keep."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the graph has more than {limit:,} autograd nodes")
        self.limit = limit


def is_callers_file(filename: str) -> bool:
    """True for code of the caller's (a script, a notebook cell, a model's module); False for
    torch's, the standard library's and this module's own frames."""
    return not (filename.startswith(_SKIPPED_DIRS) or filename == __file__)


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


def op_name(fn) -> str:
    """Autograd's class name of a node: "AddmmBackward0", "AccumulateGrad"."""
    return fn.name().rsplit("::", 1)[-1]


def _shape(fn) -> list[int] | None:
    try:
        meta = fn._input_metadata  # private, but the only place autograd keeps output shapes
        return list(meta[0].shape) if len(meta) == 1 else None
    except (AttributeError, RuntimeError):
        return None


def raw_graph(output: torch.Tensor, lines: LineRecorder | None = None,
              params: Mapping[str, torch.Tensor] | None = None, max_nodes: int = 60_000,
              replay: bool = False, inputs: Mapping[str, object] | None = None) -> dict:
    """The autograd graph behind ``output`` as the module docstring's record.

    ``lines``: the recorder that was active while ``output`` was computed (None: no lines).
    ``params``: names for leaf tensors (``dict(model.named_parameters())``).
    ``replay``: also run a real backward() with hooks (``_replay``), under ``"replay"``; the
    leaves' ``.grad`` are left as they were.
    ``inputs``: named values that may be data the run took (a script's top-level names);
    each tensor that needs no gradient and that a recorded call of this graph took is
    recorded under ``"inputs"`` (needs ``lines``).
    Raises ValueError if ``output`` is not a tensor with a ``grad_fn``, GraphTooBig past
    ``max_nodes`` nodes.
    """
    if not isinstance(output, torch.Tensor):
        raise ValueError(f"expected a tensor, got {type(output).__name__}")
    if output.grad_fn is None:
        raise ValueError("the tensor has no grad_fn: nothing that needs a gradient made it "
                         "(no parameter or tensor with requires_grad=True took part)")
    names = {id(t): name for name, t in (params or {}).items()}
    order, edges = _walk(output, max_nodes)
    files: dict[str, int] = {}
    texts: dict[str, str] = {}
    placed: dict[int, tuple[int, int, list]] = {}  # id(site) -> (file, line, loops): one per call
    nodes = []
    for fn in order:
        seq = fn._sequence_nr()
        op = op_name(fn)
        node = {"op": op, "kind": "op", "seq": None if seq == NO_SEQUENCE else seq,
                "shape": _shape(fn), "param": None, "file": None, "line": None, "loops": []}
        if op == "AccumulateGrad":
            variable = fn.variable
            node.update(seq=None, shape=list(variable.shape), param=names.get(id(variable)))
            node["kind"] = "parameter" if node["param"] is not None else "leaf"
        elif lines is not None and (site := lines.site_of(seq)) is not None:
            where = placed.get(id(site))
            if where is None:
                where = placed[id(site)] = _place(site, files, texts)
            node["file"], node["line"], node["loops"] = where
        nodes.append(node)
    raw = {"nodes": nodes, "edges": edges, "files": list(files), "texts": texts,
           "output_shape": list(output.shape)}
    if inputs and lines is not None:
        raw["inputs"] = inputs_of(order, nodes, inputs, lines.data, lines.ends)
    if replay:
        raw["replay"] = _replay(output, order)
    return raw


def _walk(output: torch.Tensor, max_nodes: int) -> tuple[list, list[list[int]]]:
    """Every grad_fn behind ``output`` (its own first), breadth first, and the forward edges."""
    index = {output.grad_fn: 0}
    order = [output.grad_fn]
    edges: list[list[int]] = []
    for dst, fn in enumerate(order):  # grows while we go: no recursion
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            src = index.get(nxt)
            if src is None:
                if len(order) >= max_nodes:
                    raise GraphTooBig(max_nodes)
                src = index[nxt] = len(order)
                order.append(nxt)
            edges.append([src, dst])
    return order, edges


def _replay(output: torch.Tensor, order: list) -> dict:
    """A real backward() from ``output.sum()`` with a prehook on every op node.

    -> ``saved`` ([tensors, bytes] autograd kept on each node, before backward frees them),
    ``backward`` ([node index, 2-norm of the gradients reaching it] in the engine's order),
    ``leaf_norms`` ({node index: norm of the leaf's .grad}), ``error`` (what backward()
    raised, e.g. after an in-place change, or None) and ``second_error`` (what a second
    backward() raises once the graph is freed, or None).
    """
    saved = [list(saved_on(fn)) for fn in order]
    steps: list[list] = []
    handles = [fn.register_prehook(_note(i, steps)) for i, fn in enumerate(order)
               if getattr(fn, "variable", None) is None]
    root = output.sum() if output.dim() else output
    error = second = None
    leaves = [(i, fn.variable) for i, fn in enumerate(order) if getattr(fn, "variable", None) is not None]
    grads_before = [leaf.grad for _, leaf in leaves]
    for _, leaf in leaves:
        leaf.grad = None  # backward adds into a .grad in place: the caller's would change
    try:
        error = _quietly(root.backward)
    finally:
        for handle in handles:
            handle.remove()
    norms = {str(i): _norm(leaf.grad) for i, leaf in leaves if leaf.grad is not None}
    for (_, leaf), before in zip(leaves, grads_before, strict=True):
        leaf.grad = before  # the caller's model is left as it was
    if error is None:
        second = _quietly(root.backward)
        for (_, leaf), before in zip(leaves, grads_before, strict=True):
            leaf.grad = before
    return {"saved": saved, "backward": steps, "leaf_norms": norms, "error": error,
            "second_error": second}


def _quietly(backward: Callable[[], None]) -> str | None:
    """Run a replay's backward() -> what it raised, in words, or None.

    It runs the caller's own hooks and custom Functions' backward again, after their code
    has ended: what they print is not the run's output, and what they raise is the
    replay's error, not the code's.
    """
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            backward()
    except Exception as e:  # noqa: BLE001 - a hook of the caller's may raise anything
        return str(e) if isinstance(e, RuntimeError) else f"{type(e).__name__}: {e}"
    return None


def _norm(grad: torch.Tensor) -> float:
    """A gradient's 2-norm; a sparse one's (an Embedding(sparse=True)'s) over its values."""
    return float(torch.linalg.vector_norm(grad.coalesce().values() if grad.is_sparse else grad))


def _note(i: int, steps: list[list]):
    """A prehook noting node ``i`` and the 2-norm of all its incoming gradients together."""
    def prehook(grad_outputs):
        squares = sum(_norm(g) ** 2 for g in grad_outputs if g is not None)
        steps.append([i, squares ** 0.5])
    return prehook


# grad_fn type -> its ``_saved_*`` attributes that may hold tensors. An attribute's C++ type
# is fixed per node type: one that held sizes or a scalar once never holds a tensor.
_SAVED_ATTRS: dict[type, tuple[str, ...]] = {}


def saved_on(fn) -> tuple[int, int]:
    """(tensors, bytes) that autograd saved on ``fn`` for its backward."""
    names = _SAVED_ATTRS.get(type(fn))
    first_look = names is None
    if first_look:
        names = tuple(a for a in dir(fn) if a.startswith("_saved_"))
    count = size = 0
    may_hold = []
    for name in names:
        try:
            value = getattr(fn, name)
        except RuntimeError:  # already freed
            may_hold.append(name)
            continue
        values = value if isinstance(value, (tuple, list)) else (value,)
        if value is None or not values or any(isinstance(t, torch.Tensor) for t in values):
            may_hold.append(name)
        for t in values:
            if isinstance(t, torch.Tensor):
                count += 1
                size += t.numel() * t.element_size()
    if first_look:
        _SAVED_ATTRS[type(fn)] = tuple(may_hold)
    return count, size


def _place(site: Site, files: dict[str, int], texts: dict[str, str]) -> tuple[int, int, list[list[int]]]:
    """A recorded call's site as the record says it: file index, line, loops; ``files`` and
    ``texts`` gain what it names."""
    filename, line, _, loops = site
    f = files.setdefault(filename, len(files))
    for where, at in ((filename, line), *((lf, h) for lf, h, _ in loops)):
        key = f"{files.setdefault(where, len(files))}:{at}"
        if key not in texts:
            texts[key] = linecache.getline(where, at).strip()
    return f, line, [[files[lf], h, k] for lf, h, k in loops]


def ops_by_type(output: torch.Tensor) -> dict[str, int]:
    """Autograd's own answer, for checks: a plain walk of ``grad_fn.next_functions``."""
    seen = {output.grad_fn}
    todo = [output.grad_fn]
    counts: dict[str, int] = {}
    while todo:
        fn = todo.pop()
        counts[op_name(fn)] = counts.get(op_name(fn), 0) + 1
        for nxt, _ in fn.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return counts
