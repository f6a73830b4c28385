"""The interactive graph view's data: a laid-out Picture (+ a Trace) as the JSON the browser draws.

Pure: no Streamlit here, so the page's component (``stockdemo.ui.graph_view``),
the command line and a handed-out HTML file all send the browser the same thing.

The contract with the browser is one JSON payload, built by ``view_payload``
(sent as its text, ``view_json``). Every word in it is in the reader's language: the
picture's part is encoded once per picture and its words said per reader (``render.said``):


- ``nodes``: parallel arrays, index i is one drawn box: ``id``, ``kind`` (index
  into ``kinds``), ``fill`` (index into ``fills``), ``x``, ``y`` (centre,
  points, y down), ``w``, ``h``, ``step``, ``layer``, and ``label``, ``op``,
  ``shape``, ``param`` as indices into ``strings`` (-1: none);
- ``edges``: ``src``, ``dst`` (node indices), ``recurrent`` (0/1);
- ``nodes.line``: per node, the line of code that made it, as an index into ``code``
  (-1: none known, e.g. a parameter or a marker). ``code``: the lines the nodes point to,
  parallel arrays ``file`` and ``text`` (indices into ``strings``: the file's name, e.g.
  "<your code>" or "stockdemo/model.py", and the line's text, stripped) and ``line``
  (1-based). The hover shows "line 12: h = torch.tanh(...)"; the editor highlights line
  ``line`` when ``file`` is the code it holds;
- ``folds``: the boxes of a code graph's picture (``stockdemo.layout.by_code``) that stand
  for a run of identical loop iterations, parallel: ``node`` (index), ``iterations``
  (how many), ``first`` and ``last`` (the iterations' numbers), ``nodes`` (graph nodes
  they hold) and ``span`` (in words, "t = 1…198"); ``unrolled``: the ids of the folds
  this picture draws unrolled on request. Drawing one unrolled is a new layout on the
  server with its id (``nodes.id``) added to ``unrolled``: a click on a fold sends that
  list as ``unroll`` (empty lists for other pictures);
- ``frames``: dashed block outlines: ``label``, ``x``, ``y`` (top left), ``w``, ``h``;
- ``stands_for``: ``node`` (indices) and ``text``, parallel, for each box that
  draws more than its own node: what it stands for, e.g. a rolled box "200
  nodes, one per time step, t 0…199", a fold "2,240 nodes of the 160 folded
  steps, t 20…179" (empty when every box is one node);
- ``counts``: the whole graph counted once (``stockdemo.graph.count_nodes``):
  ``nodes``, ``operations``, ``parameters``, ``inputs``, ``outputs``, ``edges``,
  ``boxes`` (boxes drawn for graph nodes, markers left out) and ``summary``
  ("38 nodes: 30 operations, 6 parameter tensors, the input and the output");
- ``new``: indices of nodes new since the previous run; ``selected``: index or None;
- ``selected_node``: None, or the node the URL names (it may be drawn by a box
  standing for many; its box is ``selected``): ``id``, ``text`` (the sentence
  the page prints after "Selected node"), ``op``, ``shape``, ``step``,
  ``layer``, ``param``, ``stands_for`` (what its box stands for, or None);
- ``box_height``: the graph's height in px, unless ``fill``: the view takes the height
  the window leaves under its top (a stage always does), or a screen's when it starts low;
- ``stage``: None, or the live controls drawn above the graph (``stockdemo.ui.stage``):
  ``controls`` (each ``name``, ``label``, ``help``, ``value``, and ``low``/``high``/``step``
  or ``choices`` as [value, label] pairs), ``req`` (the browser's request this payload
  answers), ``change`` (what changed since the previous run, in words), ``locked``
  (why the controls cannot move, or None), ``replay`` (the view's own replay toggle: on,
  off, or None for none), ``figures`` (the run's figures the view draws over its
  controls: each ``label``, ``value`` as text, ``delta`` (a number or None) and ``help``)
  ``present`` (presenter mode: the view drops the page-time figure), ``pin`` (false: no
  "Pin as A") and ``grows`` (where the next run may grow: "right", time steps, the graph
  centred in height; "both", a learner's code, the graph's top left corner kept in place),
  ``direct`` (the socket the strip's moves go to instead of a run, or None: ``stage_route``),
  ``redraw`` (the stage watch's redraws), ``ran`` (Your code: the learner's Run this payload
  answers, or None) and ``served`` (Your code: the view also draws the runs the code's socket
  answers, ``code_route``, and drops a page's payload for an older Run than one drawn);
- ``compare``: None, or run A pinned beside this run (B): ``a`` (A's picture, the same
  fields as this payload's picture part), ``a_label``/``b_label`` (the runs in words),
  ``added`` (B's boxes whose nodes A lacks), ``removed`` (A's boxes whose nodes B lacks),
  ``counts`` (``graph_diff``'s: ``added_nodes``, ``removed_nodes``, ``added_edges``,
  ``removed_edges``, ``reshaped_nodes``);
- ``trace``: None, or the replay by node index: ``forward`` (creation order),
  ``forward_line`` and ``forward_step`` per frame, ``backward`` and
  ``backward_norm`` (the engine's order), ``param`` and ``param_norm`` (a norm that is
  NaN or infinite is null),
  ``lines`` (source lines), ``code`` (the lines the code panel shows),
  ``source``/``saved_n``/``saved_bytes`` per node (-1: none), ``root``, ``error``,
  and ``status``, the status line's words (``stockdemo.replay.trace.replay_status``):
  ``forward`` and ``backward`` templates with ``{done}`` for the frame reached,
  ``forward_total``/``backward_total`` (the frames replayed, one per operation),
  ``forward_end`` and ``backward_end`` (what the line adds once a pass is done).

- ``words``: everything the view says, in the reader's language (``stockdemo.render.words``):
  ``lang`` (its BCP 47 tag), ``text`` (key -> words, ``{name}`` placeholders filled in the
  browser) and ``counted`` (key -> CLDR plural category -> words, ``{n}`` the count).

Values come back as the component's state (the names are declared once, in
``frontend/graph_view/src/protocol.js``): ``selected``, the id of the node the
learner selected (bound to the page's URL as ``node``, so a link names the node);
with a stage, ``knobs`` (``{knob name: value, "req": n}``, sent one request at a
time while the learner drags), ``replay`` (the view's own "Replay this run" toggle)
and the trigger ``pin`` ("pin" or "unpin" run A); with folds, ``unroll`` (the folds to
draw unrolled: ``folds.unrolled`` and the one clicked). Once the learner stops, the
stage's settle listener (``stockdemo.ui.stage_watch.settle_listener``) fires ``settled``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stockdemo import theme
from stockdemo.graph import shape_text
from stockdemo.graph.diff import GraphDiff
from stockdemo.layout.picture import Picture
from stockdemo.render.said import Said
from stockdemo.render.words import view_words_json
from stockdemo.replay.trace import replay_status

if TYPE_CHECKING:
    from stockdemo.replay.trace import Trace

Statics = Callable[[Picture], tuple[Said, dict[str, int]]]  # picture -> (its part's JSON, id -> box)
HEIGHT = 560  # px: the graph's box on a laptop; fullscreen gives it the screen

COLORS = {
    "edge": theme.GRAPH_EDGE,
    "recurrent": theme.RECURRENT,
    "muted": theme.MUTED,
    "text": theme.TEXT,
    "border": theme.BORDER,
    "newMark": theme.BLUE,
    "selected": theme.TEXT,
    "current": theme.PINK,
    "added": theme.GREEN,  # compare mode: B's nodes that A lacks
    "removed": theme.VERMILION,  # and A's that B lacks
}


def _r(v: float) -> float:
    return round(v, 1)


def node_text(payload: dict[str, Any], field: str) -> list[str | None]:
    """One text field of every node (``label``, ``op``, ``shape``, ``param``), decoded."""
    strings = payload["strings"]
    return [None if j < 0 else strings[j] for j in payload["nodes"][field]]


@dataclass(frozen=True)
class Comparison:
    """Compare mode: run A, pinned, drawn beside the run on screen (B), nodes matched by id."""

    a: Picture
    diff: GraphDiff  # graph_diff(A's graph, B's graph)
    a_label: str  # the runs in words, e.g. "T 5 · hidden 10 · 1 layer · nn.RNN"
    b_label: str


def view_payload(picture: Picture, trace: Trace | None = None, new_ids: Iterable[str] = (),
                 selected: str | None = None, height: int = HEIGHT,
                 stage: dict[str, Any] | None = None,
                 compare: Comparison | None = None, fill: bool = False) -> dict[str, Any]:
    """Picture (+ Trace) -> the component's JSON payload (see the module docstring).

    ``new_ids`` and ``selected`` are graph node ids; each is marked on the node
    drawn for it (``picture.drawn_as``). ``stage``: the strip of live controls.
    ``compare``: run A, drawn beside this one.
    """
    return json.loads(view_json(picture, trace, new_ids, selected, height, stage, compare, fill))


def view_json(picture: Picture, trace: Trace | None = None, new_ids: Iterable[str] = (),
              selected: str | None = None, height: int = HEIGHT,
              stage: dict[str, Any] | None = None, compare: Comparison | None = None,
              fill: bool = False, statics: Statics | None = None) -> str:
    """``view_payload`` as the JSON text the browser parses, the picture's part encoded once.

    The component is given this text, not a dict: Streamlit encodes a dict twice
    on every rerun (once to send, once sorted for the element's identity) and
    looks for dataframes in it; a text is sent as it is. ``statics``: where the pictures'
    parts come from (``static_payload``, or a cache of it).
    """
    statics = statics or static_payload
    static, drawn = statics(picture)
    static_json = static.text()  # the picture's words in this reader's language
    new = sorted({drawn[g] for g in new_ids if g in drawn})
    rest = {
        "box_height": height,
        "fill": fill or stage is not None,
        "new": new,
        "selected": drawn.get(selected) if selected is not None else None,
        "selected_node": _selected_node(picture, selected, drawn),
        "trace": None if trace is None else _trace_payload(trace, picture, drawn),
        "stage": stage,
    }
    rest_json = json.dumps(rest, separators=(",", ":"))
    text = f'{static_json[:-1]},{rest_json[1:-1]},"words":{view_words_json()}}}'
    if compare is None:
        return text[:-1] + ',"compare":null}'
    return text[:-1] + f',"compare":{_compare_json(compare, drawn, statics)}}}'


def _compare_json(cmp: Comparison, drawn_b: dict[str, int], statics: Statics) -> str:
    """Run A's picture (its part of a payload, as is) and what B added and lost, by box."""
    a_static, drawn_a = statics(cmp.a)
    a_json = a_static.text()
    diff = cmp.diff
    rest = {
        "a_label": str(cmp.a_label),
        "b_label": str(cmp.b_label),
        # Boxes: a rolled box stands for many nodes; the counts are graph_diff's, node by node.
        "added": sorted({drawn_b[n.id] for n in diff.added_nodes if n.id in drawn_b}),
        "removed": sorted({drawn_a[n.id] for n in diff.removed_nodes if n.id in drawn_a}),
        "counts": {"added_nodes": len(diff.added_nodes), "removed_nodes": len(diff.removed_nodes),
                   "added_edges": len(diff.added_edges), "removed_edges": len(diff.removed_edges),
                   "reshaped_nodes": len(diff.reshaped_nodes)},
    }
    return '{"a":' + a_json + "," + json.dumps(rest, separators=(",", ":"))[1:]


def graph_key(picture: Picture) -> str:
    """The payload's ``graph``: changes whenever what is drawn changes (a new shape changes
    a label). The browser keeps its zoom and replay while it stays the same, and names
    the picture it settled on by it (stockdemo.ui.stage_watch.settle_listener)."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{picture.view}\0{picture.width}\0{picture.height}".encode())
    digest.update("\0".join(p.id for p in picture.nodes).encode())
    # A box's words as their msgid and values: the key is every reader's, in every process.
    digest.update("\0".join(p.label if isinstance(p.label, str) else repr(p.label)
                            for p in picture.nodes).encode())
    return digest.hexdigest()


def static_payload(picture: Picture) -> tuple[Said, dict[str, int]]:
    """-> (the picture's part of the payload as JSON text, its words said per reader, graph node
    id -> drawn index).

    It depends on the picture alone: the app keeps it per picture (``ui.caches.cached_static_payload``)
    and hands that to ``view_json``. Its words (labels, frames, caption, counts, what a box stands
    for, a fold's span) are Messages until ``Said.text`` says them.
    """
    placed = picture.nodes
    index = {p.id: i for i, p in enumerate(placed)}
    kinds = sorted({p.kind for p in placed})
    fills = sorted({p.fill for p in placed})
    kind_ix = {k: i for i, k in enumerate(kinds)}
    fill_ix = {f: i for i, f in enumerate(fills)}
    # Labels, ops, shapes and parameter names repeat across steps: sent once each,
    # nodes point at them (at 11,248 nodes this made the JSON 40 % smaller).
    strings: dict[str, int] = {}

    def text(value: str | None) -> int:
        return -1 if value is None else strings.setdefault(value, len(strings))

    graph_nodes = [p.node for p in placed]
    shapes = [None if n is None or n.shape is None else shape_text(n.shape) for n in graph_nodes]
    nodes = {
        "id": [p.id for p in placed],
        "label": [text(p.label) for p in placed],
        "kind": [kind_ix[p.kind] for p in placed],
        "fill": [fill_ix[p.fill] for p in placed],
        "x": [round(p.x, 1) for p in placed],
        "y": [round(p.y, 1) for p in placed],
        "w": [round(p.w, 1) for p in placed],
        "h": [round(p.h, 1) for p in placed],
        "op": [text(n.op if n is not None else None) for n in graph_nodes],
        "shape": [text(v) for v in shapes],
        "step": [n.step if n is not None else None for n in graph_nodes],
        "layer": [n.layer if n is not None else None for n in graph_nodes],
        "param": [text(n.param if n is not None else None) for n in graph_nodes],
    }
    nodes["line"], code = _code_lines(graph_nodes, picture.graph.meta.get("code") or {}, text)
    pairs = [(index.get(e.src), index.get(e.dst), int(e.recurrent)) for e in picture.edges]
    pairs = [pair for pair in pairs if pair[0] is not None and pair[1] is not None]
    edges = {"src": [a for a, _, _ in pairs], "dst": [b for _, b, _ in pairs],
             "recurrent": [r for _, _, r in pairs]}
    frames = {"label": [f.label for f in picture.frames], "x": [_r(f.x) for f in picture.frames],
              "y": [_r(f.y) for f in picture.frames], "w": [_r(f.w) for f in picture.frames],
              "h": [_r(f.h) for f in picture.frames]}
    drawn = _drawn_index(picture, index)
    static = {
        "graph": graph_key(picture),
        "view": picture.view,
        "caption": picture.caption,
        "width": _r(picture.width),
        "height": _r(picture.height),
        "colors": COLORS,
        "kinds": kinds,
        "fills": fills,
        "strings": list(strings),
        "nodes": nodes,
        "edges": edges,
        "frames": frames,
        "counts": _counts(picture),
        "stands_for": {"node": [index[i] for i in picture.stands_for],
                       "text": list(picture.stands_for.values())},
        "code": code,
        "folds": _folds(picture, index),
    }
    return Said.of(static), drawn


def _code_lines(graph_nodes: list, code: dict[str, Any], text) -> tuple[list[int], dict[str, list]]:
    """Each drawn node's line (an index into the table, -1: none), and the table of lines."""
    where = code.get("lines", {})
    files, texts = code.get("files", []), code.get("texts", {})
    rows: dict[tuple[int, int], int] = {}
    per_node = []
    for n in graph_nodes:
        at = where.get(n.id) if n is not None else None
        per_node.append(-1 if at is None else rows.setdefault((at[0], at[1]), len(rows)))
    return per_node, {"file": [text(files[f] if f < len(files) else "") for f, _ in rows],
                      "line": [line for _, line in rows],
                      "text": [text(texts.get(f"{f}:{line}", "")) for f, line in rows]}


def _folds(picture: Picture, index: dict[str, int]) -> dict[str, list]:
    folds = getattr(picture, "folds", {})  # a CodePicture's rolled boxes
    return {"node": [index[i] for i in folds], "iterations": [len(f.iterations) for f in folds.values()],
            "first": [f.iterations[0] for f in folds.values()],
            "last": [f.iterations[-1] for f in folds.values()],
            "nodes": [f.nodes for f in folds.values()], "span": [f.span for f in folds.values()],
            "unrolled": list(getattr(picture, "unrolled", ()))}


def _counts(picture: Picture) -> dict[str, Any]:
    c = picture.counts
    return {"nodes": c.nodes, "operations": c.operations, "parameters": c.parameters,
            "inputs": c.inputs, "outputs": c.outputs, "edges": c.edges,
            "boxes": sum(1 for p in picture.nodes if p.node is not None), "summary": c.summary()}


def _selected_node(picture: Picture, selected: str | None, drawn: dict[str, int]
                   ) -> dict[str, Any] | None:
    """The graph node the URL names, with its own fields (not its box's: a rolled box draws many)."""
    node = picture.graph.by_id.get(selected) if selected is not None else None
    if node is None or selected not in drawn:
        return None
    return {"id": node.id, "text": picture.describe(node.id),
            "op": node.op, "shape": None if node.shape is None else shape_text(node.shape),
            "step": node.step, "layer": node.layer, "param": node.param,
            "stands_for": _said(picture.stands_for.get(picture.drawn_as[node.id]))}


def _said(words: object) -> str | None:
    return None if words is None else str(words)


def _drawn_index(picture: Picture, index: dict[str, int]) -> dict[str, int]:
    """Every graph node id (and every drawn id) -> index of the box drawn for it."""
    out = {drawn_id: i for drawn_id, i in index.items()}
    for graph_id, drawn_id in picture.drawn_as.items():
        i = index.get(drawn_id)
        if i is not None:
            out[graph_id] = i
    return out


def _finite(value: float) -> float | None:
    """A norm as JSON carries it: 6 significant digits, None for NaN or infinity (no JSON for those)."""
    return float(f"{value:.6g}") if math.isfinite(value) else None


def _trace_payload(trace: Trace, picture: Picture, drawn: dict[str, int]) -> dict[str, Any]:
    """The replay, by drawn node index. Frames whose node is not drawn are left out."""
    lines: list = []
    line_ix: dict = {}

    def line_of(src) -> int:
        if src is None:
            return -1
        if src not in line_ix:
            line_ix[src] = len(lines)
            lines.append(src)
        return line_ix[src]

    code = [line_of(s) for s in trace.forward_code]
    forward, forward_line, forward_step = [], [], []
    for node_id, step in zip(trace.forward, trace.step_of_frame, strict=True):
        i = drawn.get(node_id)
        if i is None:
            continue
        forward.append(i)
        forward_line.append(line_of(trace.source.get(node_id)))
        forward_step.append(-1 if step is None else step)
    backward, backward_norm = [], []
    for b in trace.backward:
        i = drawn.get(b.node_id)
        if i is not None:
            backward.append(i)
            backward_norm.append(_finite(b.grad_norm))
    param, param_norm = [], []
    for node_id, norm in trace.param_grad_norms.items():
        i = drawn.get(node_id)
        if i is not None:
            param.append(i)
            param_norm.append(_finite(norm))
    source, saved_n, saved_bytes = [], [], []
    for p in picture.nodes:
        source.append(line_of(trace.source.get(p.id)))
        n, size = trace.saved.get(p.id, (-1, -1))
        saved_n.append(n)
        saved_bytes.append(size)

    key = hashlib.blake2b(repr((trace.root, trace.forward[:1], len(trace.forward),
                                [b.grad_norm for b in trace.backward])).encode(), digest_size=8)
    return {
        "key": key.hexdigest(),
        "root": trace.root,
        "forward": forward, "forward_line": forward_line, "forward_step": forward_step,
        "backward": backward, "backward_norm": backward_norm,
        "param": param, "param_norm": param_norm,
        "lines": [{"file": s.file, "line": s.line, "function": s.function, "text": s.text,
                   "indent": s.indent} for s in lines],
        "code": code,
        "source": source, "saved_n": saved_n, "saved_bytes": saved_bytes,
        "error": trace.second_backward_error,
        "status": replay_status(trace.root, picture.counts, len(forward), len(backward)),
    }
