"""Capture the autograd graph a run recorded: ``capture_graph(output) -> Graph``.

``capture_graph`` walks ``output.grad_fn.next_functions`` iteratively (no
recursion limit) and keeps every node autograd recorded: one op node per
``grad_fn``, one parameter node per ``AccumulateGrad``, plus the input and the
output. Each node learns the layer and time step it belongs to from the order
autograd created the nodes in (``_sequence_nr``) and from the per-layer
``torch.stack`` of hidden states, whose inputs are the step outputs in order.
That placement is what lets the layout draw the graph as time x layer.
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_left

import torch
from torch import nn

from stockdemo.graph import FUSED, FUSED_OP, HEAD, INPUT_ID, OUTPUT_ID, POST, PRE, STEP, Graph, Node, op_name

_UINT64 = 2**64


def capture_graph(output: torch.Tensor, model: nn.Module | None = None,
                  inputs: torch.Tensor | None = None) -> Graph:
    """Walk the autograd graph behind ``output`` into a ``Graph``.

    output: (batch, out) tensor with a ``grad_fn``. ``model`` names the
    parameters; ``inputs`` (batch, seq_len, features), if given, becomes the
    input node, wired to the ops that saved a view of it.
    """
    if output.grad_fn is None:
        raise ValueError("output has no grad_fn: run the model with autograd enabled")
    # The walk allocates many small acyclic objects; a collection triggered
    # midway would scan the whole heap (tens of ms with torch loaded) for nothing.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _capture(output, model, inputs)
    finally:
        if gc_was_enabled:
            gc.enable()


def capture_graph_nodes(output: torch.Tensor, model: nn.Module | None = None,
                        inputs: torch.Tensor | None = None) -> tuple[Graph, dict[str, object]]:
    """``capture_graph``, and for each op and parameter node id the autograd node behind it.

    -> the graph, {node id: grad_fn} (an ``AccumulateGrad`` for a parameter).
    The replay (stockdemo/replay/model.py) hooks these nodes and reads their sequence numbers.
    """
    if output.grad_fn is None:
        raise ValueError("output has no grad_fn: run the model with autograd enabled")
    grad_fns: dict[str, object] = {}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _capture(output, model, inputs, grad_fns), grad_fns
    finally:
        if gc_was_enabled:
            gc.enable()


def _capture(output: torch.Tensor, model: nn.Module | None, inputs: torch.Tensor | None,
             grad_fns: dict[str, object] | None = None) -> Graph:
    param_names = {}
    if model is not None:
        param_names = {id(p): name for name, p in model.named_parameters()}

    # 1. Iterative walk: every grad_fn once, with its inputs as indices.
    order, inputs_of = walk_grad_fns(output.grad_fn)
    names = [fn.name() for fn in order]
    is_param = [n.endswith("AccumulateGrad") for n in names]
    seq = [fn._sequence_nr() for fn in order]
    ops = sorted((i for i in range(len(order)) if not is_param[i]), key=seq.__getitem__)

    # 2. Place ops in layers and steps.
    place, templates = _place_ops(names, seq, inputs_of, ops)
    if any(t is None for t in templates.values()) and model is not None \
            and inputs is not None and inputs.dim() == 3:
        # One time step: nothing repeats to show which ops make up a step, so
        # learn that from a two-step probe run of the same model.
        place, _ = _place_ops(names, seq, inputs_of, ops, _step_templates(model, inputs))

    # 3. Nodes with stable ids: block, op name, and its rank in the block.
    ids: list[str] = [""] * len(order)
    nodes: list[Node] = []
    rank: dict[tuple[str, str], int] = {}
    blocks: dict[tuple, str] = {}
    labels: dict[tuple[str, str | None], str] = {}
    for i in ops:
        fn = order[i]
        where = place[i]
        block = blocks.get(where) or blocks.setdefault(where, _block_name(*where))
        name = names[i]
        short = op_name(name)
        k = rank.get((block, short), 0)
        rank[block, short] = k + 1
        ids[i] = f"{block}/{short}{k}"
        if short == "Select":
            label = _op_label(fn, short, where[2])
        else:
            label = labels.get((short, where[2])) \
                or labels.setdefault((short, where[2]), _op_label(fn, short, where[2]))
        # tuple.__new__ skips NamedTuple's Python-level __new__: 11,000 nodes add up
        nodes.append(_new_node(Node, (ids[i], "op", label, name, None, _output_shape(fn), *where)))
    params: list[Node] = []
    for i in (i for i in range(len(order)) if is_param[i]):
        var = order[i].variable
        name = param_names.get(id(var), f"param{len(params)}")
        ids[i] = f"param/{name}"
        params.append(Node(ids[i], "parameter", name, names[i], name,
                           tuple(var.shape), _param_layer(name)))
    params.sort(key=lambda n: (n.layer if n.layer is not None else 99, n.id))

    # 4. Edges, forward direction (producer -> consumer), each pair once.
    edges = list(dict.fromkeys(
        (ids[j], ids[i]) for i in ops for j in inputs_of[i] if j is not None
    ))

    head: list[Node] = []
    if inputs is not None:
        consumers = _input_consumers(order, inputs_of, ops, place, inputs)
        head.append(Node(INPUT_ID, "input", "input x", shape=tuple(inputs.shape)))
        for i in consumers:
            edges.append((INPUT_ID, ids[i]))
    tail = [Node(OUTPUT_ID, "output", "predictions", shape=tuple(output.shape))]
    edges.append((ids[0], OUTPUT_ID))

    where_seen = set(place.values())
    steps_seen = [w[1] for w in where_seen if w[1] is not None]
    layers_seen = [w[0] for w in where_seen if w[0] is not None]
    fused = any(op_name(n) == FUSED_OP for n in set(names))
    meta = {
        "seq_len": max(steps_seen) + 1 if steps_seen else None,
        "num_layers": max(layers_seen) + 1 if layers_seen else 0,
        "unrolled": bool(steps_seen),
        "fused": fused,
        "backend": _backend(fused, output),
    }
    if grad_fns is not None:
        grad_fns.update((ids[i], fn) for i, fn in enumerate(order))
    return Graph(tuple(head + params + nodes + tail), tuple(edges), meta)


def walk_grad_fns(root) -> tuple[list, list[list[int | None]]]:
    """Every grad_fn reachable from ``root`` (root first), without recursion.

    -> the grad_fns, and for each the indices of its inputs (None where an
    input needs no gradient, e.g. the data).
    """
    index = {root: 0}
    order = [root]
    inputs_of: list[list[int | None]] = []
    for fn in order:  # grows while we go: a breadth-first walk
        row: list[int | None] = []
        for nxt, _ in fn.next_functions:
            if nxt is None:
                row.append(None)
                continue
            j = index.get(nxt)
            if j is None:
                j = index[nxt] = len(order)
                order.append(nxt)
            row.append(j)
        inputs_of.append(row)
    return order, inputs_of


def _step_templates(model: nn.Module, inputs: torch.Tensor) -> dict[int, list[str] | None]:
    """Op names of one time step, per layer, learned from a two-step run."""
    probe = model(torch.cat([inputs[:, :1]] * 2, dim=1))
    order, inputs_of = walk_grad_fns(probe.grad_fn)
    names = [fn.name() for fn in order]
    seq = [fn._sequence_nr() for fn in order]
    ops = sorted((i for i, n in enumerate(names) if not n.endswith("AccumulateGrad")),
                 key=seq.__getitem__)
    return _place_ops(names, seq, inputs_of, ops)[1]


_new_node = tuple.__new__

Placement = dict[int, tuple[int | None, int | None, str]]


def _place_ops(names: list[str], seq: list[int], inputs_of: list[list[int | None]],
               ops: list[int], templates: dict[int, list[str] | None] | None = None,
               ) -> tuple[Placement, dict[int, list[str] | None]]:
    """Op index -> (layer, step, role), from creation order and the layer stacks.

    Also returns each layer's step template (op names of step 1), None where
    the run had a single step.
    """
    is_op = set(ops)
    stacks = [i for i in ops if names[i] == "StackBackward0"]
    fused = [i for i in ops if op_name(names[i]) == FUSED_OP]
    # A layer's stack takes that layer's step outputs, in time order. Stacks of
    # other things (none in our models) are told apart by their inputs all
    # being distinct ops created before the stack.
    layer_ends: list[int] = []
    anchors: list[list[int]] = []
    for s in stacks:
        inputs = inputs_of[s]
        if inputs and all(i is not None and i in is_op for i in inputs) \
                and len(set(inputs)) == len(inputs):
            layer_ends.append(s)
            anchors.append(inputs)
    place: Placement = {}
    learned: dict[int, list[str] | None] = {}
    if fused and not layer_ends:
        bounds = [seq[i] for i in fused]
        for i in ops:
            layer = _region(seq[i], bounds)
            place[i] = (layer, None, FUSED) if layer is not None else (None, None, HEAD)
        return place, learned
    bounds = [seq[s] for s in layer_ends]
    by_layer: dict[int, list[int]] = {layer: [] for layer in range(len(bounds))}
    layer = 0
    for i in ops:  # ops and bounds both in creation order: one sweep
        while layer < len(bounds) and seq[i] > bounds[layer]:
            layer += 1
        if layer == len(bounds):
            place[i] = (None, None, HEAD)
        else:
            by_layer[layer].append(i)
    for layer, members in by_layer.items():
        steps = [seq[a] for a in anchors[layer]]
        first_block = [i for i in members if seq[i] <= steps[0]]
        if len(steps) >= 2:
            learned[layer] = [names[i] for i in members if steps[0] < seq[i] <= steps[1]]
        else:
            learned[layer] = None
        template = learned[layer] or (templates or {}).get(layer)
        n_pre = _pre_count([names[i] for i in first_block], template)
        step = 0
        for i in members:  # both in creation order: one sweep
            while step < len(steps) and seq[i] > steps[step]:
                step += 1
            place[i] = (layer, step, STEP) if step < len(steps) else (layer, None, POST)
        for i in first_block[:n_pre]:
            place[i] = (layer, None, PRE)
    return place, learned


def _pre_count(first_block: list[str], template: list[str] | None) -> int:
    """How many ops before step 0's own ops set the layer up (e.g. the input projection).

    Step 0's ops are the last ones before its output, and they repeat the op
    sequence of a later step (the template).
    """
    if template and len(template) <= len(first_block) \
            and first_block[len(first_block) - len(template):] == template:
        return len(first_block) - len(template)
    return 0


def _region(value: int, bounds: list[int]) -> int | None:
    """Index of the first bound >= value, or None past the last bound."""
    k = bisect_left(bounds, value)
    return k if k < len(bounds) else None


def _block_name(layer: int | None, step: int | None, role: str) -> str:
    if role == HEAD:
        return "head"
    if role == STEP:
        return f"L{layer}.t{step}"
    return f"L{layer}.{role}"


def _op_label(fn, short: str, role: str) -> str:
    if short == "Select":
        index = getattr(fn, "_saved_index", None)
        dim = getattr(fn, "_saved_dim", None)
        if isinstance(index, int):
            index = index - _UINT64 if index >= 2**63 else index
            if role == HEAD and index == -1 and dim == 1:
                return "last step"
            return f"Select [{index}]" if dim is None else f"Select dim {dim} [{index}]"
    if short == FUSED_OP:
        return "fused LSTM\n(every step)"
    if short.startswith("Unsafe"):
        return short.removeprefix("Unsafe")
    return short


def _output_shape(fn) -> tuple[int, ...] | None:
    try:
        meta = fn._input_metadata  # private, but the only place autograd keeps shapes
        return tuple(meta[0].shape) if len(meta) == 1 else None
    except (AttributeError, RuntimeError):
        return None


def _param_layer(name: str) -> int | None:
    m = re.search(r"_l(\d+)(?:_reverse)?$", name) or re.search(r"cells\.(\d+)\.", name)
    return int(m.group(1)) if m else None


def _input_consumers(order, inputs_of, ops, place: Placement, inputs: torch.Tensor) -> list[int]:
    """Ops where the input ``x`` enters the graph.

    ``x`` needs no gradient, so it enters through an empty input slot. An op
    that saved a view of ``x`` is a consumer; where the module copied ``x``
    first (``nn.RNN`` reorders it), the first layer's set-up ops with an
    empty slot are.
    """
    target = inputs.untyped_storage().data_ptr()
    open_slot = [i for i in ops if None in inputs_of[i] and place[i][0] in (0, None)
                 and place[i][2] != HEAD]
    found = []
    for i in open_slot:
        fn = order[i]
        for attr in dir(fn):
            if not attr.startswith("_saved_") or attr.endswith(("sizes", "strides")):
                continue
            try:
                value = getattr(fn, attr)
            except RuntimeError:
                continue
            if isinstance(value, torch.Tensor) and value.untyped_storage().data_ptr() == target:
                found.append(i)
                break
    if not found:
        found = [i for i in open_slot if place[i][2] in (PRE, FUSED)][:1]
    return found


def _backend(fused: bool, output: torch.Tensor) -> str:
    device = output.device.type
    if fused:
        return (f"{device}: nn.LSTM ran as one fused oneDNN (MKLDNN) kernel per layer, "
                "so autograd recorded one node per layer, whatever the sequence length")
    return f"{device}: every time step recorded its own autograd nodes"
