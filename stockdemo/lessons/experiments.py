"""Measures on the app's own experiments: a Playground run, torch.compile, Debugging's hooks,
a training run, the Lab's different lengths. Each is computed live from the core, never
from a constant: when a page stops telling the truth, the lesson's answer changes with it.

Each measure's default label and detail are the built-in lesson's words; a lesson may word
its own over the same values (``measures``).
"""

from __future__ import annotations

import re
from collections import Counter

from stockdemo import lab
from stockdemo import static_graphs as static
from stockdemo.cells import CELL_LABELS
from stockdemo.config import CELLS, SEQ_LEN, RunConfig, TrainConfig
from stockdemo.graph import FUSED_OP, Graph, count_text, op_name
from stockdemo.graph import STEP as STEP_ROLE
from stockdemo.i18n import N_, Message, later
from stockdemo.i18n.deferred import later_list, later_number, later_significant
from stockdemo.lessons.facts import op_names
from stockdemo.lessons.measures import Param, Reading, measure
from stockdemo.live import inspection
from stockdemo.live.run import printed, run
from stockdemo.train import prices as data
from stockdemo.train import training as train

# Words a measure's values hold: Messages, said in the reader's language where the answer is shown.
WORDS: dict[str, Message] = {
    "reused": later("reused"),
    "captured again": later("captured again"),
    "exported": later("exported"),
    "vanished": later("vanished to 0"),
    "wins": later("Yes"),
    "loses": later("No: the baseline wins"),
    "wins verdict": later("One split proves little: try other seeds and tickers before believing it."),
    "loses verdict": later("Yesterday's close is a hard forecast to beat."),
    "packed equal": later("exactly equal"),
}


def node_count(config: RunConfig) -> int:
    return run(config).graph.counts.nodes


def blocks_per_layer(graph: Graph) -> dict[int, int]:
    """Layer -> how many time-step blocks autograd recorded in it."""
    blocks = {(n.layer, n.step) for n in graph.nodes if n.role == STEP_ROLE}
    return dict(sorted(Counter(layer for layer, _ in blocks).items()))


@measure("grad_fn", RunConfig, "predictions.grad_fn",
         N_("`backward()` starts from it: the last of the {operations} PyTorch wrote down while "
            "`forward` ran."),
         ("operations", "nodes"))
def grad_fn(config: RunConfig) -> Reading:
    """The output's grad_fn, as ``print(predictions)`` shows it."""
    counts = run(config).graph.counts
    name = re.search(r"grad_fn=<(\w+)>", printed(config)).group(1)
    return Reading(name, {"operations": count_text(counts.operations, "op"), "nodes": counts.nodes})


@measure("output_shape", RunConfig, "predictions.shape", N_("This run recorded {summary}."),
         ("summary", "nodes"))
def output_shape(config: RunConfig) -> Reading:
    result = run(config)
    return Reading(str(tuple(result.predictions.shape)),
                   {"summary": result.graph.counts.summary(), "nodes": result.graph.counts.nodes})


@measure("nodes", RunConfig, N_("Nodes in the graph"), N_("This run recorded {summary}."),
         ("summary", "nodes"))
def nodes(config: RunConfig) -> Reading:
    counts = run(config).graph.counts
    return Reading(str(counts.nodes), {"summary": counts.summary(), "nodes": counts.nodes})


@measure("ops", RunConfig, N_("{op} nodes"), N_("This run recorded {count} {op} nodes among {summary}."),
         ("op", "count", "summary"), {"op": Param("op", required=True)})
def ops(config: RunConfig, op: str) -> Reading:
    graph = run(config).graph
    names = op_names(op)
    count = sum(n.op in names for n in graph.op_nodes)
    return Reading(str(count), {"op": op, "count": count, "summary": graph.counts.summary()})


@measure("nodes_gained", RunConfig, N_("Nodes gained, T {from_t} → {to_t}"),
         N_("T = {from_t}: {from_nodes} nodes. T = {to_t}: {to_nodes} nodes."),
         ("from_t", "to_t", "from_nodes", "to_nodes", "ops_gained", "fused", "other_cell", "other_from",
          "other_to"),
         {"from_seq_len": Param("int", SEQ_LEN.low, SEQ_LEN.high),
          "other_cell": Param("choice", choices=CELLS)})
def nodes_gained(config: RunConfig, from_seq_len: int | None = None,
                 other_cell: str | None = None) -> Reading:
    """Nodes gained from a shorter run (one step shorter by default) to this one; with
    ``other_cell``, the same two lengths with another cell."""
    start = config.seq_len - 1 if from_seq_len is None else from_seq_len
    short, long = run(config.replace(seq_len=start)).graph, run(config).graph
    values = {"from_t": start, "to_t": config.seq_len, "from_nodes": short.counts.nodes,
              "to_nodes": long.counts.nodes,
              "ops_gained": count_text(long.counts.operations - short.counts.operations, "op"),
              "fused": sum(op_name(n.op) == FUSED_OP for n in long.op_nodes)}
    if other_cell is not None:
        other = config.replace(cell=other_cell)
        values.update(other_cell=CELL_LABELS[other_cell], other_from=node_count(other.replace(seq_len=start)),
                      other_to=node_count(other))
    return Reading(f"{long.counts.nodes - short.counts.nodes:+d}", values)


@measure("blocks", RunConfig, N_("Blocks, {layers} layers × T = {seq_len}"),
         N_("{per_layer}: one per time step, per layer."), ("layers", "seq_len", "per_layer", "gain"))
def blocks(config: RunConfig) -> Reading:
    per_layer = blocks_per_layer(run(config).graph)
    gain = node_count(config.replace(seq_len=config.seq_len + 1)) - node_count(config)
    layers = later_list(later("{count} in layer {layer}", count=count, layer=str(layer))
                        for layer, count in per_layer.items())
    return Reading(str(sum(per_layer.values())), {"layers": config.num_layers, "seq_len": config.seq_len,
                                                  "per_layer": layers, "gain": gain})


@measure("static_captures", RunConfig, N_("Static graphs torch.compile captured"),
         N_("One per new shape ({recompiles} recompile). {back}"),
         ("recompiles", "back_t", "back", "export", "reused", "exported"))
def static_captures(config: RunConfig) -> Reading:
    """torch.compile sees T, then one longer, then T again: a new shape, then one already seen."""
    lengths = (config.seq_len, config.seq_len + 1, config.seq_len)
    capture = static.compile_capture(config, lengths)
    export = static.export_dynamic_seq_len(config)
    reused, error = not capture.steps[-1].new_graph, export.error_name
    return Reading(str(len(capture.graphs)), {
        "recompiles": capture.recompiles, "back_t": lengths[-1],
        "reused": WORDS["reused" if reused else "captured again"],
        "back": later("Back at T = {back_t} it reused its graph.", back_t=lengths[-1]) if reused
        else later("Back at T = {back_t} it captured a new graph.", back_t=lengths[-1]),
        "exported": WORDS["exported"] if export.ok else later("failed with `{error}`", error=error),
        "export": later("`torch.export` with T marked dynamic: it exported one graph.") if export.ok
        else later("`torch.export` with T marked dynamic: it failed with `{error}`.", error=error)})


def subscript(number: int) -> str:
    """19 -> '₁₉', so h₁₉ reads like h₀."""
    return str(number).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


@measure("gradient_ratio", RunConfig, N_("Gradient at step 0, against the last step"),
         N_("‖∂L/∂h₀‖ = {first} at the first step, ‖∂L/∂h{last_step}‖ = {last} at the last "
         "(first / last = {ratio})."), ("first", "last", "last_step", "ratio"))
def gradient_ratio(config: RunConfig) -> Reading:
    inspected = inspection.inspect_run(config)
    ratio = inspected.vanishing_ratio
    trend = inspection.gradient_trend(ratio)
    factor = later_number(trend.factor, 0)
    value = {inspection.VANISHED: WORDS["vanished"],
             inspection.VANISHING: later("{factor}× smaller", factor=factor),
             inspection.EXPLODING: later("{factor}× bigger", factor=factor)}[trend.kind]
    norms = inspected.grad_norms[-1]
    # written as the Debugging page writes them: its figure is the number revealed
    return Reading(value, {"first": later_significant(norms[0]), "last": later_significant(norms[-1]),
                           "last_step": subscript(config.seq_len - 1), "ratio": later_significant(ratio)})


@measure("baseline", TrainConfig, N_("Does the model beat tomorrow = today?"),
         N_("Test RMSE over {days} held-out days: model {model}, tomorrow = today {naive} (dollars). "
            "{verdict}"),
         ("days", "model", "naive", "verdict"))
def baseline(config: TrainConfig) -> Reading:
    dataset, _ = data.load_dataset(config)
    result = train.run_training(dataset, config)
    rmse = result.metrics["RMSE"]
    model, naive = rmse[train.MODEL_ROW], rmse[train.PERSISTENCE_ROW]
    side = "wins" if model < naive else "loses"
    return Reading(WORDS[side], {"days": len(result.forecasts), "model": later_number(model, 3),
                                 "naive": later_number(naive, 3), "verdict": WORDS[f"{side} verdict"]})


@measure("padding_gap", lab.LengthsConfig, N_("Short weeks' predictions moved by"),
         N_("{short} of {weeks} weeks are short. Packed with `pack_padded_sequence`: {packed} to each week "
         "run alone ({sizes})."), ("short", "weeks", "packed", "sizes"))
def padding_gap(config: lab.LengthsConfig) -> Reading:
    result = lab.different_lengths(config)
    packed = WORDS["packed equal"] if result.packed_gap == 0 else later(
        "within {gap}", gap=later_significant(result.packed_gap, 1))
    windows = sorted({(n, g.counts.nodes) for n, g in zip(result.lengths, result.window_graphs, strict=True)})
    sizes = later_list((later("{days} days: {nodes} nodes", days=n, nodes=nodes) for n, nodes in windows),
                       semicolons=True)
    return Reading(later("up to {gap}", gap=later_significant(result.padded_gaps.max())),
                   {"short": sum(n < max(result.lengths) for n in result.lengths),
                    "weeks": len(result.lengths), "packed": packed, "sizes": sizes})
