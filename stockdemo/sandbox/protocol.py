"""The sandbox's boundary: what crosses each pipe, as JSON, and the run the page gets (``CodeRun``).

Three processes: the server (``pool.py``), the fork server (``watch.py`` is its
side of the runs), and one child per run (``child.py``), where the learner's
code runs. Only JSON crosses, never pickle: the child is hostile, so every
field it sends is parsed from bounded bytes and checked here (type, range,
length) before use, and anything unexpected makes the run's error, never an
exception in the server.

- **server -> fork server** (the pool's channel, ``stockdemo/forkserver/wire.py``'s
  frames): ``{"run": id, "source": str, "limits": Limits.to_dict()}``.
- **fork server -> server**: ``{"ready": pid, "landlock": ABI or 0, "rss_mb":
  its size}`` once it has imported torch; ``{"broken": message}`` if it cannot
  sandbox anything here; ``{"done": id, "run": {...}}`` for each run, ``run``
  holding ``CodeRun``'s wire fields: ``error``, ``printed``, ``shape``,
  ``graph``, ``refused``, ``seconds``, ``cpu_s``, ``walls``.
- **child -> fork server**: the print pipe carries the learner's printed text
  (UTF-8, at most the output limit: more kills the run); the result pipe one
  JSON object (at most ``MAX_RESULT_BYTES``), ``check_child_result``'s fields:
  - ``error``: None, or ``{"kind", "limit", "type", "message", "line"}``:
    ``kind`` is ``"error"`` (Python or torch raised: ``type`` and ``message``
    are theirs), ``"limit"`` (``limit`` names it: a ``Limits`` field, or
    ``"recursion"``), ``"refused"`` (the sandbox refused a system call),
    ``"crash"`` (the process died: a signal), or ``"unavailable"`` (not run:
    feature off, pool busy, no sandbox here); ``line`` is the line of the
    learner's code (1-based) or None;
  - ``shape``: the output's shape, or None;
  - ``graph``: None, or ``stockdemo.graph.recorder.raw_graph``'s record (nodes,
    edges, files, texts, output_shape, and ``replay``: the real backward()'s
    order, gradient norms, saved tensors and errors), at most ``graph_nodes`` nodes;
  - ``graphs``: the graphs the code's own ``backward()`` calls freed, oldest
    first, each a record like ``graph`` without ``replay`` (at most
    ``MAX_GRAPHS``, all of them and ``graph`` within ``graph_nodes`` nodes);
    ``built``: how many backward() calls the run made in all; ``graph_freed``:
    whether ``graph`` is part of the last of them (a training loop's last
    iteration), so the film ends on that one rather than on ``graph``;
  - ``refused``: what the sandbox refused, in words (``attempts.py``);
  - ``exec_s``: seconds the script ran; ``walls``: ``"landlock N"`` or
    ``"no landlock"`` (then no file at all may be opened).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from stockdemo.graph.data import MAX_INPUTS
from stockdemo.graph.ids import graph_of_record
from stockdemo.i18n import tr, trn
from stockdemo.i18n.deferred import later_list
from stockdemo.sandbox import attempts, words
from stockdemo.sandbox.limits import OFF_MESSAGE, OFF_WORDS, SPEC, Limits

MAX_RESULT_BYTES = 32 * 2**20
KINDS = ("error", "limit", "refused", "crash", "unavailable")
LIMIT_NAMES = (*SPEC, "recursion")
NODE_KINDS = ("op", "parameter", "leaf")
MAX_TEXT = 2000
MAX_NAME = 200
MAX_DIMS = 16
MAX_LOOPS = 64
MAX_REFUSED = 20
MAX_GRAPHS = 20


class BadResult(ValueError):
    """A field the child sent is not what the protocol allows."""


def _str(value: object, limit: int, what: str, none: bool = False) -> str | None:
    if value is None and none:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise BadResult(f"{what}: expected text of at most {limit} characters")
    return value


def _int(value: object, low: int, high: int, what: str, none: bool = False) -> int | None:
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadResult(f"{what}: expected a whole number in {low}..{high}")
    return value


def _float(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e6:
        raise BadResult(f"{what}: expected seconds")
    return float(value)


def _bool(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise BadResult(f"{what}: expected true or false")
    return value


def _list(value: object, limit: int, what: str) -> list:
    if not isinstance(value, list) or len(value) > limit:
        raise BadResult(f"{what}: expected a list of at most {limit:,} items")
    return value


def _exactly(value: object, n: int, what: str) -> list:
    items = _list(value, n, what)
    if len(items) != n:
        raise BadResult(f"{what}: expected {n} items")
    return items


def _shape(value: object, what: str, none: bool = True) -> list[int] | None:
    if value is None and none:
        return None
    return [_int(d, 0, 2**62, what) for d in _list(value, MAX_DIMS, what)]


def check_error(raw: object) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"words"} != {"kind", "limit", "type", "message", "line"}:
        raise BadResult("error: expected kind, limit, type, message, line, words")
    if raw["kind"] not in KINDS or (raw["limit"] is not None and raw["limit"] not in LIMIT_NAMES):
        raise BadResult("error: unknown kind or limit")
    try:
        said = words.check_words(raw.get("words"))
    except ValueError as err:
        raise BadResult(str(err)) from None
    return {"kind": raw["kind"], "limit": raw["limit"], "type": _str(raw["type"], MAX_NAME, "error type"),
            "message": _str(raw["message"], MAX_TEXT, "error message"),
            "line": _int(raw["line"], 1, 10**7, "error line", none=True), "words": said}


def check_graph(raw: object, max_nodes: int) -> dict | None:
    """``stockdemo.graph.recorder.raw_graph``'s record, rebuilt from checked fields only."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"replay", "inputs"} != {"nodes", "edges", "files", "texts",
                                                                         "output_shape"}:
        raise BadResult("graph: expected nodes, edges, files, texts, output_shape, inputs, replay")
    files = [_str(f, MAX_NAME, "graph file") for f in _list(raw["files"], 64, "graph files")]
    raw_nodes = _list(raw["nodes"], max_nodes, "graph nodes")
    n = len(raw_nodes)
    nodes = []
    for node in raw_nodes:
        if not isinstance(node, dict) or set(node) != {"op", "kind", "seq", "shape", "param", "file",
                                                       "line", "loops"}:
            raise BadResult("graph node: unexpected fields")
        if node["kind"] not in NODE_KINDS:
            raise BadResult("graph node: unknown kind")
        loops = []
        for loop in _list(node["loops"], MAX_LOOPS, "loops"):
            f, h, k = _exactly(loop, 3, "loop")
            loops.append([_int(f, 0, len(files) - 1, "loop file"), _int(h, 1, 10**7, "loop line"),
                          _int(k, 0, 2**62, "loop iteration")])
        nodes.append({"op": _str(node["op"], MAX_NAME, "op"), "kind": node["kind"],
                      "seq": _int(node["seq"], 0, 2**64, "seq", none=True),
                      "shape": _shape(node["shape"], "node shape"),
                      "param": _str(node["param"], MAX_NAME, "param", none=True),
                      "file": _int(node["file"], 0, len(files) - 1, "node file", none=True),
                      "line": _int(node["line"], 1, 10**7, "node line", none=True), "loops": loops})
    edges = []
    for edge in _list(raw["edges"], 64 * max(n, 1), "graph edges"):
        src, dst = _exactly(edge, 2, "edge")
        edges.append([_int(src, 0, n - 1, "edge"), _int(dst, 0, n - 1, "edge")])
    if not isinstance(raw["texts"], dict) or len(raw["texts"]) > n:
        raise BadResult("graph texts: expected at most one line per node")
    texts = {_str(k, 40, "text key"): _str(v, MAX_TEXT, "text") for k, v in raw["texts"].items()}
    graph = {"nodes": nodes, "edges": edges, "files": files, "texts": texts,
             "output_shape": _shape(raw["output_shape"], "output shape", none=False)}
    if "inputs" in raw:
        graph["inputs"] = check_inputs(raw["inputs"], n)
    if "replay" in raw:
        graph["replay"] = check_replay(raw["replay"], n)
    return graph


def check_inputs(raw: object, n: int) -> list[dict]:
    """Where data entered a graph of ``n`` nodes (``raw_graph``'s ``inputs``), rebuilt from
    checked fields: a name is a Python identifier, as the script's own names are."""
    inputs = []
    for item in _list(raw, MAX_INPUTS, "inputs"):
        if not isinstance(item, dict) or not {"name", "shape", "to"} <= set(item) <= {"name", "shape", "to",
                                                                                       "steps"}:
            raise BadResult("graph input: expected name, shape, to, steps")
        name = _str(item["name"], MAX_NAME, "input name")
        if not name.isidentifier():
            raise BadResult("graph input: a name is an identifier")
        shape = _shape(item["shape"], "input shape", none=False)
        checked = {"name": name, "shape": shape,
                   "to": [_int(i, 0, n - 1, "input node") for i in _list(item["to"], n, "input nodes")]}
        if "steps" in item:
            checked["steps"] = _steps(item["steps"], len(checked["to"]), shape)
        inputs.append(checked)
    return inputs


def _steps(raw: object, n: int, shape: list[int]) -> list[list[list[int]]]:
    """The time steps each entry of an input took: inclusive ranges within its dimension 1."""
    if len(shape) < 3:
        raise BadResult("graph input steps: only data with a time axis has steps")
    last = shape[1] - 1
    steps = [[_exactly(r, 2, "input step range") for r in _list(per_node, shape[1], "input steps")]
             for per_node in _exactly(raw, n, "input steps")]
    return [[[_int(a, 0, last, "input step"), _int(b, 0, last, "input step")] for a, b in per_node]
            for per_node in steps]


def check_graphs(raw: object, graph: dict | None, max_nodes: int) -> list[dict]:
    """The graphs a run's backward() calls freed: at most MAX_GRAPHS, without replays, their
    nodes and ``graph``'s within ``max_nodes`` all together."""
    room = max_nodes - (0 if graph is None else len(graph["nodes"]))
    graphs = []
    for item in _list(raw, MAX_GRAPHS, "graphs"):
        if isinstance(item, dict) and "replay" in item:
            raise BadResult("graphs: a freed graph has no replay")
        checked = check_graph(item, max(room, 0))
        if checked is None:
            raise BadResult("graphs: expected graphs")
        room -= len(checked["nodes"])
        graphs.append(checked)
    return graphs


def check_replay(raw: object, n: int) -> dict:
    """The backward replay (``stockdemo.graph.backward``) of a graph of ``n`` nodes, rebuilt from
    checked fields."""
    if not isinstance(raw, dict) or set(raw) != {"saved", "backward", "leaf_norms", "error", "second_error"}:
        raise BadResult("replay: expected saved, backward, leaf_norms, error, second_error")
    saved = [_exactly(s, 2, "saved") for s in _list(raw["saved"], n, "saved")]
    backward = [_exactly(b, 2, "backward step") for b in _list(raw["backward"], 4 * n + 16, "backward")]
    if not isinstance(raw["leaf_norms"], dict) or len(raw["leaf_norms"]) > n:
        raise BadResult("replay leaf_norms: expected one norm per leaf at most")
    leaves = {}
    for key, value in raw["leaf_norms"].items():
        if not (isinstance(key, str) and key.isdigit() and int(key) < n):
            raise BadResult("replay leaf_norms: expected node indices")
        leaves[key] = _norm(value)
    return {"saved": [[_int(k, 0, 2**31, "saved tensors"), _int(b, 0, 2**62, "saved bytes")]
                      for k, b in saved],
            "backward": [[_int(i, 0, n - 1, "backward node"), _norm(v)] for i, v in backward],
            "leaf_norms": leaves,
            "error": _str(raw["error"], MAX_TEXT, "replay error", none=True),
            "second_error": _str(raw["second_error"], MAX_TEXT, "replay second error", none=True)}


def _norm(value: object) -> float:
    """A gradient norm: any float, NaN and infinity included (a NaN lesson sends them)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadResult("replay: expected a number")
    return float(value)


def check_child_result(data: bytes, limits: Limits) -> dict:
    """The result pipe's bytes -> checked fields (module docstring). Raises BadResult."""
    if len(data) > MAX_RESULT_BYTES:
        raise BadResult("result: too large")
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        raise BadResult("result: not JSON") from None
    if not isinstance(raw, dict) or not set(raw) <= {"error", "shape", "graph", "graphs", "built",
                                                     "graph_freed", "refused", "exec_s", "walls"}:
        raise BadResult("result: unexpected fields")
    graph = check_graph(raw.get("graph"), limits.graph_nodes)
    return {"error": check_error(raw.get("error")), "shape": _shape(raw.get("shape"), "shape"),
            "graph": graph, "graphs": check_graphs(raw.get("graphs", []), graph, limits.graph_nodes),
            "built": _int(raw.get("built", 0), 0, 2**62, "built"),
            "graph_freed": _bool(raw.get("graph_freed", False), "graph_freed"),
            "refused": [_str(r, 300, "refused") for r in _list(raw.get("refused", []), MAX_REFUSED,
                                                                "refused")],
            "exec_s": _float(raw.get("exec_s", 0.0), "exec_s"),
            "walls": _str(raw.get("walls", ""), 40, "walls")}


@dataclass(frozen=True)
class CodeError:
    """How a run ended when it did not end well (see ``error`` in the module docstring)."""

    kind: str
    type: str
    message: str  # in English (the command line's JSON)
    line: int | None = None
    limit: str | None = None
    words: words.Words | None = None  # the message by id and values, said in the reader's language


@dataclass(frozen=True)
class CodeRun:
    """One run of a learner's code, as the page and the command line get it."""

    limits: Limits
    error: CodeError | None = None
    printed: str = ""
    shape: tuple[int, ...] | None = None
    graph: dict | None = None  # graph.recorder.raw_graph's record, checked
    graphs: tuple[dict, ...] = ()  # the graphs the code's backward() calls freed, oldest first
    built: int = 0  # how many backward() calls the run made (graphs keeps at most MAX_GRAPHS)
    graph_freed: bool = False  # graph is part of the one the last backward() freed
    refused: tuple[str, ...] = ()  # what the sandbox refused, in words
    seconds: float = 0.0  # fork to result, in the fork server
    cpu_s: float = 0.0  # the child's CPU time
    queued_s: float = 0.0  # waiting for a free place in the pool (and for the pool to start)
    walls: str = ""  # "landlock 7", or "no landlock"

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def status(self) -> str:
        """'ok', or the error's kind: 'error', 'limit', 'refused', 'crash', 'unavailable'."""
        return "ok" if self.error is None else self.error.kind

    @property
    def ops_by_type(self) -> dict[str, int]:
        """Autograd's class name -> count, over every node of the graph (AccumulateGrad too)."""
        if self.graph is None:
            return {}
        return dict(Counter(n["op"] for n in self.graph["nodes"]).most_common())

    @property
    def film(self) -> tuple[dict, ...]:
        """Every graph the run built, in order: the ones its backward() calls freed, then the
        graph of predictions unless the last backward() freed it (it is part of that one)."""
        if self.graph is None or (self.graph_freed and self.graphs):
            return self.graphs
        return (*self.graphs, self.graph)

    @property
    def film_words(self) -> str:
        """What the film shows, in one sentence in the language spoken now ("" for a run that
        called no backward())."""
        if not self.built:
            return ""
        built = trn("This run built {n} graph, freed by its backward()",
                    "This run built {n} graphs, each freed by its backward()", self.built)
        if len(self.graphs) < self.built:
            built = tr("{built}; {drawn} are drawn here, the rest counted", built=built,
                       drawn=len(self.graphs))
        if self.graph is None or self.graph_freed:
            return tr("{built}.", built=built)
        return tr("{built}; then the graph of predictions.", built=built)

    @property
    def message(self) -> str:
        """One paragraph for the learner, in the language spoken now: the error (its words made
        in English where the run was, said again here from what it names), and what the
        sandbox refused on the way."""
        parts = [] if self.error is None else [self._said_error()]
        if self.refused and (self.error is None or self.error.kind != "refused"):
            parts.append(tr("The sandbox refused to {attempts}.",
                            attempts=later_list((attempts.said(r) for r in self.refused), semicolons=True)))
        return " ".join(parts)

    def _said_error(self) -> str:
        error = self.error
        if error.words is not None:
            said = words.said(error.words)
            if error.kind == "limit" and error.limit in SPEC:
                return self.limits.stopped(error.limit, said)
            return f"{error.type}: {said}" if error.kind == "error" else said
        if error.kind == "error":
            return f"{error.type}: {error.message}"  # Python's or torch's own words
        if error.message == OFF_MESSAGE:
            return str(OFF_WORDS)
        if error.kind == "limit" and error.limit in SPEC:
            return self.limits.said(error.limit, error.message)
        return error.message

    def to_dict(self) -> dict[str, Any]:
        """The command line's JSON (and a test's view): counts, printed text, shape, error, limits."""
        graph = self.graph
        counted = None if graph is None else graph_of_record(graph).counts  # as every page counts
        counts = [graph_of_record(g).counts for g in self.film]
        return {
            "status": self.status,
            "nodes": 0 if counted is None else counted.nodes,
            "edges": 0 if counted is None else counted.edges,
            "ops_by_type": self.ops_by_type,
            "printed": self.printed,
            "shape": None if self.shape is None else list(self.shape),
            "error": None if self.error is None else {
                "kind": self.error.kind, "type": self.error.type, "message": self.error.message,
                "line": self.error.line, "limit": self.error.limit},
            "graphs": [{"nodes": c.nodes, "edges": c.edges,
                        "ops_by_type": dict(Counter(n["op"] for n in g["nodes"]).most_common()),
                        "freed_by_backward": g is not self.graph}
                       for g, c in zip(self.film, counts, strict=True)],
            "backward_calls": self.built,
            "graphs_in_words": self.film_words,
            "refused": list(self.refused),
            "message": self.message,
            "limits": self.limits.to_dict(),
            "limits_in_words": self.limits.words(),
            "seconds": round(self.seconds, 4),
            "cpu_s": round(self.cpu_s, 4),
            "queued_s": round(self.queued_s, 4),
            "walls": self.walls,
        }

    def wire(self) -> dict[str, Any]:
        """The fields the fork server sends the server (module docstring)."""
        return {"error": None if self.error is None else {
                    "kind": self.error.kind, "limit": self.error.limit, "type": self.error.type,
                    "message": self.error.message, "line": self.error.line,
                    "words": words.to_wire(self.error.words)},
                "printed": self.printed, "shape": None if self.shape is None else list(self.shape),
                "graph": self.graph, "graphs": list(self.graphs), "built": self.built,
                "graph_freed": self.graph_freed,
                "refused": list(self.refused), "seconds": self.seconds,
                "cpu_s": self.cpu_s, "walls": self.walls}

    @classmethod
    def from_wire(cls, raw: object, limits: Limits, queued_s: float = 0.0) -> CodeRun:
        """The fork server's ``run`` -> CodeRun, every field checked again. Raises BadResult."""
        if not isinstance(raw, dict) or set(raw) != {"error", "printed", "shape", "graph", "graphs", "built",
                                                     "graph_freed", "refused", "seconds", "cpu_s", "walls"}:
            raise BadResult("run: unexpected fields")
        error = check_error(raw["error"])
        shape = _shape(raw["shape"], "shape")
        graph = check_graph(raw["graph"], limits.graph_nodes)
        return cls(limits=limits, error=None if error is None else CodeError(**error),
                   printed=_str(raw["printed"], limits.output_bytes, "printed"),
                   shape=None if shape is None else tuple(shape),
                   graph=graph, graphs=tuple(check_graphs(raw["graphs"], graph, limits.graph_nodes)),
                   built=_int(raw["built"], 0, 2**62, "built"),
                   graph_freed=_bool(raw["graph_freed"], "graph_freed"),
                   refused=tuple(_str(r, 300, "refused") for r in _list(raw["refused"], MAX_REFUSED,
                                                                         "refused")),
                   seconds=_float(raw["seconds"], "seconds"), cpu_s=_float(raw["cpu_s"], "cpu_s"),
                   queued_s=queued_s, walls=_str(raw["walls"], 40, "walls"))


def unavailable(limits: Limits, message: str | dict, type_: str = "SandboxUnavailable",
                limit: str | None = None) -> CodeRun:
    """A run that never started: feature off, pool busy, code too long, no sandbox here.
    ``message``: its words, or ``words.worded(...)``'s fields."""
    kind = "limit" if limit else "unavailable"
    said = message if isinstance(message, dict) else {"message": message}
    return CodeRun(limits=limits, error=CodeError(kind, type_, line=None, limit=limit, **said))
