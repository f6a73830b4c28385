"""A recorded run (``stockdemo.graph.recorder.raw_graph``) as a ``Graph`` whose ids survive edits.

A record with ``tags`` (the steps and layers of a recurrent model's run) names its nodes by
block instead: ``stockdemo.graph.tagged``.

An edit of the code should glide, not jump: a node that stays keeps its id, so the view
keeps its place and ``graph_diff`` rings only what the edit added or removed. A node's
id is therefore built from what an edit elsewhere does not change:

- the *text* of the line that made it (not its number, which shifts when a line is added
  above), with its occurrence among identical lines;
- the iteration of every loop around that line (``@3``, ``@1.4`` for nested loops), and of
  a loop torch ran inside the line, found by its repeated ops (nn.RNN's steps);
- its op and its rank among that line's nodes of that op in that iteration.

    a3f9c1@3/Addmm0      the first Addmm made by line "h = cell(x[:, t], h)" at t 3
    param/cell.weight_hh a named parameter; leaf/<consumer id>/0 an unnamed leaf
    output               the run's output
    input/x              the script's data x (a tensor needing no gradient), where it entered

``graph_of_record(raw)`` keeps what the layout needs in ``Graph.meta["code"]``: each
node's line and loops, the lines' text, and each loop's name ("t" for ``for t in``).
"""

from __future__ import annotations

import ast
import hashlib
from collections import defaultdict
from typing import Any

from stockdemo.graph import LEAF_LABEL, OUTPUT_LABEL, Graph, Node, input_label, op_name
from stockdemo.graph.parse import parse
from stockdemo.graph.tagged import graph_of_tagged
from stockdemo.heap import collector_paused

OUTPUT_ID = "output"
INPUT_PREFIX = "input/"  # input/x: the script's tensor x, where it entered the graph


def line_key(text: str) -> str:
    """A short, stable name for a line of code, from its text alone."""
    return hashlib.blake2b(text.encode(), digest_size=3).hexdigest()


def loop_name(header: str) -> str:
    """What one iteration of a loop is called: 'for t in range(5):' -> 't'; a while -> ''."""
    try:
        tree = parse(header.rstrip(":") + ": pass")
    except SyntaxError:
        return ""
    loop = tree.body[0] if tree.body else None
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        target = loop.target
        while isinstance(target, (ast.Tuple, ast.List)) and target.elts:
            target = target.elts[0]
        if isinstance(target, ast.Name):
            return target.id
    return ""


def graph_of_record(raw: dict[str, Any]) -> Graph:
    """The record of a run -> a Graph: one node per autograd node, plus the output.

    Node fields: ``op`` autograd's name; ``step`` the innermost loop's iteration (None
    outside loops); ``layer`` and ``role`` None. ``meta["code"]``: ``lines`` (node id ->
    [file, line], the line's text in ``texts["file:line"]``), ``loops`` (node id ->
    [[loop, iteration], ...], outermost first; a loop is "file:header line"),
    ``loop_names`` (loop -> "t", or "" for a while), ``hidden_loops`` (the loops torch ran
    inside one line, "file:line~k": ``_hidden_loops``), ``files``, ``texts``, and ``ids``
    (the record's node i -> its id here: the record's ``replay`` counts by index).
    A tagged record: ``graph_of_tagged``.
    """
    with collector_paused():
        return graph_of_tagged(raw) if "tags" in raw else _graph_of_code(raw)


def _graph_of_code(raw: dict[str, Any]) -> Graph:
    nodes = raw["nodes"]
    texts: dict[str, str] = raw.get("texts", {})
    files: list[str] = raw.get("files", [])
    sites = _line_names(nodes, texts, files)
    texts = dict(texts)
    hidden = _hidden_loops(nodes, texts)
    loops_of = [n["loops"] + hidden.get(i, []) for i, n in enumerate(nodes)]
    ids = [""] * len(nodes)
    rank: dict[tuple[str, str], int] = defaultdict(int)
    made = sorted((n["seq"], i) for i, n in enumerate(nodes) if n["seq"] is not None)
    for _, i in made:  # creation order: ranks follow the code
        n = nodes[i]
        group = sites.get((n["file"], n["line"]), "?")
        if loops_of[i]:
            group += "@" + ".".join([str(k) for _, _, k in loops_of[i]])
        short = op_name(n["op"])
        ids[i] = f"{group}/{short}{rank[group, short]}"
        rank[group, short] += 1
    _name_leaves(nodes, raw["edges"], ids)

    graph_nodes: list[Node] = []
    lines: dict[str, list[int]] = {}
    loops: dict[str, list[tuple[str, int]]] = {}
    names: dict[tuple[int, object], str] = {}  # (file, header) -> the loop's key, made once
    for i, n in enumerate(nodes):
        shape = tuple(n["shape"]) if n["shape"] is not None else None
        if n["kind"] == "op":
            around = loops_of[i]
            step = around[-1][2] if around else None
            graph_nodes.append(Node(ids[i], "op", op_name(n["op"]), n["op"], None, shape, None, step))
            if n["line"] is not None:
                lines[ids[i]] = [n["file"], n["line"]]
            if around:
                loops[ids[i]] = [(names.get((f, h)) or names.setdefault((f, h), f"{f}:{h}"), k)
                                 for f, h, k in around]
        elif n["kind"] == "parameter":
            graph_nodes.append(Node(ids[i], "parameter", n["param"], n["op"], n["param"], shape))
        else:  # a tensor that requires grad but is no named parameter
            graph_nodes.append(Node(ids[i], "input", LEAF_LABEL, n["op"], shape=shape))
    graph_nodes.append(Node(OUTPUT_ID, "output", OUTPUT_LABEL,
                            shape=tuple(raw.get("output_shape") or ()) or None))
    edges = list(dict.fromkeys((ids[s], ids[d]) for s, d in raw["edges"]))
    if nodes:
        edges.append((ids[0], OUTPUT_ID))
    for data in raw.get("inputs", ()):  # where the script's data entered: drawn, as the Playground's x
        input_id = f"{INPUT_PREFIX}{data['name']}"
        graph_nodes.append(Node(input_id, "input", input_label(data["name"]), shape=tuple(data["shape"])))
        edges += [(input_id, ids[j]) for j in data["to"]]
    headers = {key for per_node in loops.values() for key, _ in per_node}
    meta = {
        "unrolled": False,  # no steps x layers: no tags, so stockdemo.layout.steps does not draw it
        "seq_len": None,
        "num_layers": 0,
        "code": {"ids": ids, "files": files, "texts": texts, "lines": lines, "loops": loops,
                 "loop_names": {key: loop_name(texts.get(key, "")) for key in sorted(headers)},
                 "hidden_loops": sorted({f"{f}:{h}" for per_node in hidden.values()
                                         for f, h, _ in per_node})},
    }
    return Graph(tuple(graph_nodes), tuple(edges), meta)


def _line_names(nodes: list[dict], texts: dict[str, str], files: list[str]
                ) -> dict[tuple[int, int], str]:
    """(file, line) -> the line's name: its text's key, then "+k" for its k-th identical twin.

    Twins are counted in (file name, line) order, so a line added elsewhere renames nothing.
    """
    used = {(n["file"], n["line"]) for n in nodes if n["line"] is not None}
    by_text: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for f, line in used:
        by_text[texts.get(f"{f}:{line}", "")].append((files[f] if f < len(files) else "", line, f))
    out = {}
    for text, where in by_text.items():
        key = line_key(text)
        for k, (_, line, f) in enumerate(sorted(where)):
            out[(f, line)] = key if k == 0 else f"{key}+{k}"
    return out


def _name_leaves(nodes: list[dict], edges: list[list[int]], ids: list[str]) -> None:
    """Parameters by name; other leaves by the earliest-made op they feed, and their slot."""
    consumers: dict[int, list[int]] = defaultdict(list)
    for src, dst in edges:
        consumers[src].append(dst)
    taken: dict[str, int] = defaultdict(int)
    for i, n in enumerate(nodes):
        if n["seq"] is not None:
            continue
        if n["param"] is not None:
            ids[i] = f"param/{n['param']}"
            continue
        fed = [d for d in consumers.get(i, ()) if nodes[d]["seq"] is not None]
        first = ids[min(fed, key=lambda d: nodes[d]["seq"])] if fed else "root"
        ids[i] = f"leaf/{first}/{taken[first]}"
        taken[first] += 1


MIN_PERIOD = 2  # ops in one repeat of a loop torch ran inside one line
MIN_REPEATED = 6  # ops covered by the repeats, at least


def _hidden_loops(nodes: list[dict], texts: dict[str, str]) -> dict[int, list[list]]:
    """Loops that ran inside one line, where the tracer cannot see them (nn.RNN's steps in
    C++, nn.TransformerEncoder's layers in torch's own Python): node index -> [[file,
    "line~k", repeat]], for the nodes of each run of repeated op sequences.

    A line's nodes in creation order whose op names repeat with a period (the same ops,
    step after step) form a loop, one iteration per period; ``texts`` gains each hidden
    loop's line text under its own key.
    """
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, n in enumerate(nodes):  # the line decides the loops around it: their iterations suffice
        if n["seq"] is not None and n["line"] is not None:
            groups[(n["file"], n["line"], *[k for _, _, k in n["loops"]])].append(i)
    out: dict[int, list[list]] = {}
    for (f, line, *_), members in groups.items():
        if len(members) < MIN_REPEATED:
            continue
        members.sort(key=lambda i: nodes[i]["seq"])
        ops = [nodes[i]["op"] for i in members]
        for k, (start, period, count) in enumerate(periodic_runs(ops, 0, len(ops))):
            key = f"{line}~{k}"
            texts[f"{f}:{key}"] = texts.get(f"{f}:{line}", "")
            for j in range(start, start + period * count):
                out[members[j]] = [[f, key, (j - start) // period]]
    return out


def periodic_runs(ops: list[str], lo: int, hi: int) -> list[tuple[int, int, int]]:
    """Runs of ``ops[lo:hi]`` made of one sequence repeated: (start, period, repeats), in order.

    The longest run first, then the same search on each side of it. Periods tried: the
    most common distances between two uses of one op (a step's ops recur a step apart).
    """
    if hi - lo < MIN_REPEATED:
        return []
    gaps: dict[int, int] = defaultdict(int)
    last: dict[str, int] = {}
    for i in range(lo, hi):
        j = last.get(ops[i])
        if j is not None:
            gaps[i - j] += 1
        last[ops[i]] = i
    best = (0, 0, 0)  # (ops covered, start, period)
    for period in sorted(gaps, key=gaps.__getitem__, reverse=True)[:4]:
        if period < MIN_PERIOD:
            continue
        i = lo
        while i + period < hi:
            if ops[i] != ops[i + period]:
                i += 1
                continue
            start = i
            while i + period < hi and ops[i] == ops[i + period]:
                i += 1
            covered = (i - start + period) // period * period
            if covered > best[0]:
                best = (covered, start, period)
    covered, start, period = best
    if covered < MIN_REPEATED or covered < 2 * period:
        return []
    return [*periodic_runs(ops, lo, start), (start, period, covered // period),
            *periodic_runs(ops, start + covered, hi)]
