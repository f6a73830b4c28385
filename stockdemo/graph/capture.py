"""A recurrent model's run, recorded with each node's layer, time step and role: ``capture_graph``.

The run is recorded like any other (``stockdemo.graph.recorder.raw_graph``). What only this
module knows is where each node of a model that stacks each layer's step outputs (``nn.RNN``,
``nn.GRU``, ``LoopRNN``: the StockPredictor) belongs: its layer and time step, read from
the order autograd created the nodes in (``_sequence_nr``) and from the per-layer
``torch.stack`` of hidden states, whose inputs are the step outputs in order. It writes that
on the record as its ``tags``, with where the input ``x`` entered; ``stockdemo.graph.tagged``
names the nodes by their blocks, and ``stockdemo.layout.steps`` draws them as time x layer.

    raw = record_steps(output, model, x)          # the record, tagged
    graph = capture_graph(output, model, x)       # the same, as a Graph
    raw = record_of_run(output, model, (x,))      # tagged for a StockPredictor, plain for any other
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import NamedTuple

import torch
from torch import nn

from stockdemo.graph import FUSED, FUSED_OP, HEAD, LAST_STEP, POST, PRE, STEP, Graph, op_name
from stockdemo.graph.backward import saved_names
from stockdemo.graph.ids import graph_of_record
from stockdemo.graph.lines import LineRecorder
from stockdemo.graph.recorder import op_name as autograd_name
from stockdemo.graph.recorder import raw_graph, walk_grad_fns
from stockdemo.model import StockPredictor

_UINT64 = 2**64


def record_steps(output: torch.Tensor, model: nn.Module | None = None, inputs: torch.Tensor | None = None,
                 lines: LineRecorder | None = None, replay: bool = False) -> dict:
    """The record of the run behind ``output`` (``raw_graph``), tagged with each node's layer, step
    and role.

    output: (batch, out) tensor with a ``grad_fn``. ``model`` names the parameters; ``inputs``
    (batch, seq_len, features), if given, is recorded as the data entering the graph, wired to
    the ops that saved a view of it. ``lines``, ``replay``: as ``raw_graph``'s.
    """
    params = dict(model.named_parameters()) if model is not None else None
    return raw_graph(output, lines, params, replay=replay,
                     tag=lambda raw, order, inputs_of: _tag(raw, order, inputs_of, output, model, inputs))


def capture_graph(output: torch.Tensor, model: nn.Module | None = None,
                  inputs: torch.Tensor | None = None) -> Graph:
    """``record_steps``'s record as a Graph: nodes named by their blocks (``L0.t3/Addmm0``)."""
    return graph_of_record(record_steps(output, model, inputs))


def record_of_run(output: torch.Tensor, model: object, inputs: tuple[object, ...] = (),
                  lines: LineRecorder | None = None, replay: bool = False) -> dict:
    """The record of ``model(*inputs)``'s run behind ``output``: the one "StockPredictor, or anything
    else?". A StockPredictor called on its input of (batch, seq_len, features) is tagged with its
    steps and layers (drawn as the Playground draws it); any other model, or other inputs, is
    recorded as any code is, its inputs as the data x (x1, x2, ... for several).
    """
    if isinstance(model, StockPredictor) and len(inputs) <= 1 \
            and all(isinstance(x, torch.Tensor) and x.dim() == 3 for x in inputs):
        return record_steps(output, model, inputs[0] if inputs else None, lines, replay)
    params = dict(model.named_parameters()) if isinstance(model, nn.Module) else {}
    data: Mapping[str, object] = {"x": inputs[0]} if len(inputs) == 1 else \
        {f"x{i}": x for i, x in enumerate(inputs, 1)}
    return raw_graph(output, lines, params, replay=replay, inputs=data)


def _tag(raw: dict, order: list, inputs_of: list[list[int | None]], output: torch.Tensor,
         model: nn.Module | None, inputs: torch.Tensor | None) -> None:
    """Adds ``tags`` (each node's layer, step, role and label) and ``inputs`` (where x entered) to ``raw``."""
    nodes = raw["nodes"]
    names = [n["op"] for n in nodes]
    seq = [n["seq"] for n in nodes]
    ops = sorted((i for i, s in enumerate(seq) if s is not None), key=seq.__getitem__)
    place, templates = _place_ops(names, seq, inputs_of, ops)
    if any(t is None for t in templates.values()) and model is not None \
            and inputs is not None and inputs.dim() == 3:
        # One time step: nothing repeats to show which ops make up a step, so
        # learn that from a two-step probe run of the same model.
        place, _ = _place_ops(names, seq, inputs_of, ops, _step_templates(model, inputs))
    label: list[str | None] = [None] * len(nodes)
    selects = {name for name in set(names) if op_name(name) == "Select"}
    for i in ops:
        if names[i] in selects:
            label[i] = _select_label(order[i], place.role[i])
    for i, s in enumerate(seq):
        if s is None and nodes[i]["param"] is not None:
            place.layer[i] = _param_layer(nodes[i]["param"])
    raw["tags"] = {"layer": place.layer, "step": place.step, "role": place.role, "label": label,
                   "device": output.device.type}
    if inputs is not None:
        raw["inputs"] = [{"name": "x", "shape": list(inputs.shape),
                          "to": _input_consumers(order, inputs_of, ops, place, inputs)}]


def _step_templates(model: nn.Module, inputs: torch.Tensor) -> dict[int, list[str] | None]:
    """Op names of one time step, per layer, learned from a two-step run."""
    probe = model(torch.cat([inputs[:, :1]] * 2, dim=1))
    order, inputs_of = walk_grad_fns(probe.grad_fn)
    names = [autograd_name(fn) for fn in order]
    seq = [fn._sequence_nr() for fn in order]
    ops = sorted((i for i, n in enumerate(names) if n != "AccumulateGrad"),
                 key=seq.__getitem__)
    return _place_ops(names, seq, inputs_of, ops)[1]


class Placement(NamedTuple):
    """Each node's layer, step and role, by its index (None for a node that is no op)."""

    layer: list[int | None]
    step: list[int | None]
    role: list[str | None]


def _place_ops(names: list[str], seq: list[int], inputs_of: list[list[int | None]],
               ops: list[int], templates: dict[int, list[str] | None] | None = None,
               ) -> tuple[Placement, dict[int, list[str] | None]]:
    """Each op's layer, step and role, from creation order and the layer stacks.

    Also returns each layer's step template (op names of step 1), None where
    the run had a single step.
    """
    n = len(names)
    place = Placement([None] * n, [None] * n, [None] * n)
    layer_of, step_of, role_of = place
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
    learned: dict[int, list[str] | None] = {}
    if fused and not layer_ends:
        bounds = [seq[i] for i in fused]
        for i in ops:
            layer_of[i] = _region(seq[i], bounds)
            role_of[i] = FUSED if layer_of[i] is not None else HEAD
        return place, learned
    bounds = [seq[s] for s in layer_ends]
    by_layer: dict[int, list[int]] = {layer: [] for layer in range(len(bounds))}
    layer = 0
    for i in ops:  # ops and bounds both in creation order: one sweep
        while layer < len(bounds) and seq[i] > bounds[layer]:
            layer += 1
        if layer == len(bounds):
            role_of[i] = HEAD
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
            layer_of[i] = layer
            if step < len(steps):
                step_of[i], role_of[i] = step, STEP
            else:
                role_of[i] = POST
        for i in first_block[:n_pre]:
            step_of[i], role_of[i] = None, PRE
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


def _select_label(fn, role: str) -> str | None:
    """A Select's box says which step it takes ("Select [2]"; the head's "last step"), read from
    what autograd saved; None where it saved no index."""
    index = getattr(fn, "_saved_index", None)
    dim = getattr(fn, "_saved_dim", None)
    if not isinstance(index, int):
        return None
    index = index - _UINT64 if index >= 2**63 else index
    if role == HEAD and index == -1 and dim == 1:
        return LAST_STEP
    return f"Select [{index}]" if dim is None else f"Select dim {dim} [{index}]"


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
    open_slot = [i for i in ops if None in inputs_of[i] and place.layer[i] in (0, None)
                 and place.role[i] != HEAD]
    found = []
    for i in open_slot:
        fn = order[i]
        for attr in saved_names(type(fn)):
            if attr.endswith(("sizes", "strides")):
                continue
            try:
                value = getattr(fn, attr)
            except RuntimeError:
                continue
            if isinstance(value, torch.Tensor) and value.untyped_storage().data_ptr() == target:
                found.append(i)
                break
    if not found:
        found = [i for i in open_slot if place.role[i] in (PRE, FUSED)][:1]
    return found
