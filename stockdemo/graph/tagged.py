"""A tagged record (``stockdemo.graph.capture.record_steps``) as a Graph whose ids name blocks.

Each node's ``tags`` say its layer, time step and role, so its id says where it is, and
stays there from one run to the next (a longer T adds ``L0.t5/...``, renames nothing):

    L0.t3/Addmm0        the first Addmm of layer 0's step 3
    L1.pre/Addmm0       layer 1's set-up before its steps (all steps at once); L0.post, L0.fused
    head/Select0        after the recurrent layers (the head: last step -> fc)
    param/rnn.weight_hh_l0, input, output

The nodes are listed as the steps x layers layout reads them: the input, the parameters by
layer, the ops in the order autograd created them, the output. Pure: no torch here.
"""

from __future__ import annotations

from typing import Any

from stockdemo.graph import (
    FUSED_LABEL,
    FUSED_OP,
    HEAD,
    INPUT_ID,
    OUTPUT_ID,
    PREDICTIONS,
    STEP,
    Graph,
    Node,
    input_label,
    op_name,
)

_new_node = tuple.__new__  # skips NamedTuple's Python-level __new__: 11,000 nodes add up


def graph_of_tagged(raw: dict[str, Any]) -> Graph:
    """The record's nodes, each with its tags, ids by block; ``meta`` says the steps and layers
    seen (``seq_len``, ``num_layers``, ``unrolled``: any steps at all, ``fused``), ``tagged``,
    and, in ``code``, the record's node i -> its id (``ids``) and each op's line, if recorded."""
    nodes, tags = raw["nodes"], raw["tags"]
    ids = [""] * len(nodes)
    seq = [n["seq"] for n in nodes]
    ops = sorted((i for i, s in enumerate(seq) if s is not None), key=seq.__getitem__)
    graph_ops, shorts = _op_nodes(nodes, tags, ops, ids)
    params = _leaf_nodes(nodes, tags, ids)
    inputs = [Node(INPUT_ID if k == 0 else f"{INPUT_ID}/{data['name']}", "input", input_label(data["name"]),
                   shape=tuple(data["shape"])) for k, data in enumerate(raw.get("inputs", ()))]
    output = Node(OUTPUT_ID, "output", PREDICTIONS, shape=tuple(raw["output_shape"]))
    feeds: list[list[int]] = [[] for _ in nodes]
    for src, dst in raw["edges"]:
        feeds[dst].append(src)
    # Each pair once (an op that took one input twice has one edge from it), by consumer in
    # creation order (a list first: a generator here cost 0.8 ms more at 11,000 nodes).
    edges = list(dict.fromkeys([(ids[j], ids[i]) for i in ops for j in feeds[i]]))
    for node, data in zip(inputs, raw.get("inputs", ()), strict=True):
        edges += [(node.id, ids[j]) for j in data["to"]]
    edges.append((ids[0], OUTPUT_ID))
    meta = _meta(raw, tags, ops, ids, FUSED_OP in shorts)
    return Graph(tuple(inputs + params + graph_ops + [output]), tuple(edges), meta)


def _op_nodes(nodes: list[dict], tags: dict[str, list], ops: list[int], ids: list[str]
              ) -> tuple[list[Node], set[str]]:
    """The op nodes in creation order, and their ops' short names; ``ids`` gains theirs: block,
    op name, rank in the block."""
    layers, steps, roles, labels = tags["layer"], tags["step"], tags["role"], tags["label"]
    out = []
    ranks: dict[tuple, dict[str, int]] = {}  # block -> its ops' names -> how many so far
    shorts: dict[str, str] = {}  # autograd's name -> the short one
    shown: dict[str, str] = {}  # short name -> its label
    where = block = rank = None
    for i in ops:  # creation order: a block's ops mostly follow each other
        node = nodes[i]
        if (layers[i], steps[i], roles[i]) != where:
            where = (layers[i], steps[i], roles[i])
            rank = ranks.get(where)
            if rank is None:
                rank = ranks[where] = {}
            block = block_name(*where) + "/"
        op = node["op"]
        short = shorts.get(op) or shorts.setdefault(op, op_name(op))
        k = rank.get(short, 0)
        rank[short] = k + 1
        node_id = ids[i] = f"{block}{short}{k}"
        label = labels[i] or shown.get(short) or shown.setdefault(short, op_label(short))
        shape = node["shape"]
        out.append(_new_node(Node, (node_id, "op", label, op, None,
                                    None if shape is None else tuple(shape), *where)))
    return out, set(shown)


def _leaf_nodes(nodes: list[dict], tags: dict[str, list], ids: list[str]) -> list[Node]:
    """The parameters, by layer (the head's last), then by id; ``ids`` gains theirs."""
    out = []
    for i, node in enumerate(nodes):
        if node["seq"] is not None:
            continue
        name = node["param"] or f"param{len(out)}"
        ids[i] = f"param/{name}"
        out.append(Node(ids[i], "parameter", name, node["op"], name, tuple(node["shape"]), tags["layer"][i]))
    out.sort(key=lambda n: (n.layer if n.layer is not None else 99, n.id))
    return out


def _meta(raw: dict[str, Any], tags: dict[str, list], ops: list[int], ids: list[str], fused: bool
          ) -> dict[str, object]:
    """The steps and layers the ops were placed in, the backend's story, and the ids and lines."""
    steps = {tags["step"][i] for i in ops} - {None}
    layers = {tags["layer"][i] for i in ops} - {None}
    lines = {ids[i]: [n["file"], n["line"]] for i, n in enumerate(raw["nodes"]) if n["line"] is not None} \
        if raw["files"] else {}
    return {
        "seq_len": max(steps) + 1 if steps else None,
        "num_layers": max(layers) + 1 if layers else 0,
        "unrolled": bool(steps),
        "fused": fused,
        "backend": _backend(fused, raw["tags"]["device"]),
        "tagged": True,
        "code": {"ids": ids, "files": raw["files"], "texts": raw["texts"], "lines": lines},
    }


def block_name(layer: int | None, step: int | None, role: str) -> str:
    """(0, 3, "step") -> 'L0.t3'; (1, None, "pre") -> 'L1.pre'; the head's -> 'head'."""
    if role == HEAD:
        return "head"
    if role == STEP:
        return f"L{layer}.t{step}"
    return f"L{layer}.{role}"


def op_label(short: str) -> str:
    """What an op's box says where its tags give no label: its name, a fused layer's story."""
    if short == FUSED_OP:
        return FUSED_LABEL
    return short.removeprefix("Unsafe")


def _backend(fused: bool, device: str) -> str:
    if fused:
        return (f"{device}: nn.LSTM ran as one fused oneDNN (MKLDNN) kernel per layer, "
                "so autograd recorded one node per layer, whatever the sequence length")
    return f"{device}: every time step recorded its own autograd nodes"
