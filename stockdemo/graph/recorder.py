"""Any run's autograd graph as a record: plain data, the one format every drawing starts from.

    with LineRecorder() as lines:                   # stockdemo.graph.lines: which line made each node
        predictions = model(x)
    raw = raw_graph(predictions, lines, dict(model.named_parameters()))

``raw`` is plain JSON-able data, the contract with whoever draws it (the sandbox worker sends
it over a pipe; the Playground, the notebook widget, the pages and the command line draw it
through ``stockdemo.code.view.drawing_of_record``):

- ``nodes``: one per autograd node, the output's ``grad_fn`` first (a breadth-first walk
  of ``next_functions``); each ``{"op", "kind", "seq", "shape", "param", "file", "line",
  "loops"}``:
  ``op``, autograd's own class name (``"AddmmBackward0"``, ``"AccumulateGrad"``);
  ``kind``, ``"op"``, ``"parameter"`` (a leaf that is a named parameter) or ``"leaf"``
  (any other tensor that requires grad); ``seq``, the creation order
  (``grad_fn._sequence_nr()``), None for leaves; ``shape``, the node's output shape
  (a leaf's own; a tuple here, a list once through JSON) or None; ``param``, the
  parameter's name or None; ``file``, an index into ``files`` or None (made by no code of
  the caller's, e.g. inside a C++ kernel);
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
- ``replay`` (``replay=True``): a real backward() seen by a prehook on every node
  (``stockdemo.graph.backward.replay_backward``).
- ``tags`` (a run whose structure is known: ``stockdemo.graph.capture.record_steps``):
  columns as long as ``nodes``, ``layer``, ``step`` and ``role`` (``pre``, ``step``,
  ``post``, ``fused`` or ``head``; None for a leaf) of each node, ``label`` (a box's text
  where the op's name does not say it, e.g. "Select [2]"; else None), and ``device``. A
  tagged record is drawn as time steps x layers (``stockdemo.layout.views``), its ids
  naming its blocks (``stockdemo.graph.tagged``).
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Mapping

import torch

from stockdemo.graph.backward import replay_backward
from stockdemo.graph.data import inputs_of as data_inputs
from stockdemo.graph.lines import LineRecorder, Site
from stockdemo.heap import collector_paused

CODE_FILE = "<your code>"  # the file name learners' code is compiled under, in the sandbox
NO_SEQUENCE = 2**64 - 1  # what _sequence_nr() says of an AccumulateGrad

# Adds a record's ``tags`` while its graph is whole: (the record, its grad_fns, each one's inputs).
Tagger = Callable[[dict, list, list], None]


class GraphTooBig(Exception):
    """The walk met more autograd nodes than it may keep."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the graph has more than {limit:,} autograd nodes")
        self.limit = limit


def walk_grad_fns(root, max_nodes: int | None = None) -> tuple[list, list[list[int | None]]]:
    """Every grad_fn reachable from ``root`` (root first, breadth first), without recursion.

    -> the grad_fns, and for each the indices of its inputs, one per input slot (None where an
    input needs no gradient, e.g. the data). Raises GraphTooBig past ``max_nodes``.
    """
    index = {root: 0}
    order = [root]
    inputs_of: list[list[int | None]] = []
    limit = max_nodes or 0
    for fn in order:  # grows while we go
        row: list[int | None] = []
        for nxt, _ in fn.next_functions:
            if nxt is None:
                row.append(None)
                continue
            j = index.get(nxt)
            if j is None:
                j = index[nxt] = len(order)
                if j == limit:
                    raise GraphTooBig(limit)
                order.append(nxt)
            row.append(j)
        inputs_of.append(row)
    return order, inputs_of


_OP_NAMES: dict[str, str] = {}  # autograd's full name -> the record's


def op_name(fn) -> str:
    """Autograd's class name of a node: "AddmmBackward0", "AccumulateGrad"."""
    full = fn.name()
    name = _OP_NAMES.get(full)
    if name is None:
        name = _OP_NAMES[full] = full.rsplit("::", 1)[-1]
    return name


def raw_graph(output: torch.Tensor, lines: LineRecorder | None = None,
              params: Mapping[str, torch.Tensor] | None = None, max_nodes: int = 60_000,
              replay: bool = False, inputs: Mapping[str, object] | None = None,
              tag: Tagger | None = None) -> dict:
    """The autograd graph behind ``output`` as the module docstring's record.

    ``lines``: the recorder that was active while ``output`` was computed (None: no lines).
    ``params``: names for leaf tensors (``dict(model.named_parameters())``).
    ``replay``: also run a real backward() with hooks (``replay_backward``), under ``"replay"``;
    the leaves' ``.grad`` are left as they were.
    ``inputs``: named values that may be data the run took (a script's top-level names);
    each tensor that needs no gradient and that a recorded call of this graph took is
    recorded under ``"inputs"`` (needs ``lines``).
    ``tag``: adds the record's ``tags`` (``stockdemo.graph.capture``), before the replay.
    Raises ValueError if ``output`` is not a tensor with a ``grad_fn``, GraphTooBig past
    ``max_nodes`` nodes.
    """
    if not isinstance(output, torch.Tensor):
        raise ValueError(f"expected a tensor, got {type(output).__name__}")
    if output.grad_fn is None:
        raise ValueError("the tensor has no grad_fn: nothing that needs a gradient made it "
                         "(no parameter or tensor with requires_grad=True took part)")
    with collector_paused():
        order, inputs_of = walk_grad_fns(output.grad_fn, max_nodes)
        edges = [[j, i] for i, row in enumerate(inputs_of) for j in row if j is not None]
        raw = {"nodes": _nodes(order, params), "edges": edges, "files": [], "texts": {},
               "output_shape": list(output.shape)}
        if lines is not None:
            raw["files"], raw["texts"] = _place_lines(raw["nodes"], lines)
            if inputs:
                raw["inputs"] = data_inputs(inputs_of, raw["nodes"], inputs, lines.data, lines.ends)
        if tag is not None:
            tag(raw, order, inputs_of)
        if replay:
            raw["replay"] = replay_backward(output, order)
        return raw


# A node of the record before its fields are filled: copying it is several times faster than
# building a dict of eight keys, and a run can have 60,000 nodes.
_BLANK = {"op": None, "kind": "op", "seq": None, "shape": None, "param": None, "file": None, "line": None,
          "loops": None}


def _nodes(order: list, params: Mapping[str, torch.Tensor] | None) -> list[dict]:
    """The record's nodes, without their lines. (``op_name`` and ``_shape`` written out: at
    11,000 nodes, calling them cost a tenth of the whole record.)"""
    names = {id(t): name for name, t in (params or {}).items()}
    short = _OP_NAMES
    nodes = []
    blank = _BLANK.copy
    for fn in order:
        node = blank()
        full = fn.name()
        node["op"] = op = short.get(full) or op_name(fn)
        node["loops"] = []
        if op == "AccumulateGrad":
            variable = fn.variable
            node["param"] = param = names.get(id(variable))
            node["kind"] = "leaf" if param is None else "parameter"
            node["shape"] = tuple(variable.shape)
            nodes.append(node)
            continue
        seq = fn._sequence_nr()
        node["seq"] = None if seq == NO_SEQUENCE else seq
        try:
            meta = fn._input_metadata  # private, but the only place autograd keeps output shapes
            node["shape"] = tuple(meta[0].shape) if len(meta) == 1 else None
        except (AttributeError, RuntimeError):
            pass
        nodes.append(node)
    return nodes


def _place_lines(nodes: list[dict], lines: LineRecorder) -> tuple[list[str], dict[str, str]]:
    """Each op node's file, line and loops, from the call that made it -> the files and the
    texts of the lines they name."""
    files: dict[str, int] = {}
    texts: dict[str, str] = {}
    placed: dict[int, tuple[int, int, list]] = {}  # id(site) -> (file, line, loops): one per call
    for node in nodes:
        seq = node["seq"]
        site = lines.site_of(seq) if seq is not None else None
        if site is None:
            continue
        where = placed.get(id(site))
        if where is None:
            where = placed[id(site)] = _place(site, files, texts)
        node["file"], node["line"], node["loops"] = where
    return list(files), texts


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
