"""What the Lab page shows for each experiment: sentences, numbers, graphs and charts.

``report(result)`` turns any Lab result into a ``Report``, so the page only
lays it out. Every number in it comes from the result, that is from the run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import singledispatch
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from stockdemo import lab, theme
from stockdemo.cells import CELL_LABELS
from stockdemo.config import CHOICE_LABELS
from stockdemo.figures import frame, with_automargin
from stockdemo.graph import Graph
from stockdemo.lab import COST_CELLS

# Every cell its own colour, marker and dash: several cells save the same bytes at every T,
# and their lines lie on one another (with colour alone, 6 legend entries showed 3 lines).
CELL_STYLES = {cell: {"line": {"color": colour, "width": width, "dash": dash},
                      "marker": {"symbol": symbol, "size": 9, "color": colour}}
               for cell, colour, width, dash, symbol in zip(
                   COST_CELLS, theme.PALETTE,
                   (5, 5, 5, 2.5, 2.5, 2.5), ("solid", "solid", "solid", "dash", "dot", "dashdot"),
                   ("circle", "square", "diamond", "x", "cross", "triangle-up"), strict=False)}
# Lines closer than this share of the chart's height look like one.
COINCIDE_WITHIN = 0.01
COLOURS = {"one by one": theme.BLUE, "packed": theme.GREEN, "padded": theme.VERMILION,
           "carried": theme.VERMILION, "detached": theme.BLUE}


class LabGraph(NamedTuple):
    """One graph an experiment shows: a short name to pick it by, a caption with its numbers."""

    label: str  # stable whatever the settings: the page's picker and the URL use it
    caption: str
    graph: Graph


@dataclass(frozen=True)
class Report:
    headline: str
    metrics: tuple[tuple[str, str, str], ...]  # (label, value, help)
    errors: tuple[tuple[str, str], ...]  # (what the code did, torch's message word for word)
    code: tuple[tuple[str, str], ...]  # (caption, the source that ran)
    notes: tuple[str, ...]  # markdown
    graphs: tuple[LabGraph, ...]
    figures: tuple[tuple[go.Figure, str, str], ...]  # (figure, alt text, caption under it or "")
    table: pd.DataFrame | None


def size(n: float) -> str:
    """Bytes for people: 15288 -> '14.9 KB'."""
    return f"{n / 1024:,.1f} KB" if abs(n) >= 1024 else f"{n:,.0f} B"


def gap(value: float) -> str:
    """A largest difference between two sets of predictions, in words when there is none."""
    return "exactly equal" if value == 0 else f"at most {value:.1g} apart"


def coinciding(series: dict[str, list[float]]) -> list[list[str]]:
    """Groups of series (at the same x) that no eye can tell apart on one chart -> their names.

    Two lines coincide when they are nowhere further apart than ``COINCIDE_WITHIN`` of
    the tallest value drawn.
    """
    top = max((max(ys) for ys in series.values() if ys), default=0.0) or 1.0
    groups: list[list[str]] = []
    for name, ys in series.items():
        for group in groups:
            if max(abs(a - b) for a, b in zip(series[group[0]], ys, strict=True)) <= COINCIDE_WITHIN * top:
                group.append(name)
                break
        else:
            groups.append([name])
    return [group for group in groups if len(group) > 1]


def overlap_caption(series: dict[str, list[float]], unit: str = "KB") -> str:
    """Which cells' lines lie on one another, said under the chart, and how they are told apart."""
    said = []
    for group in coinciding(series):
        apart = max(abs(a - b) for name in group[1:]
                    for a, b in zip(series[group[0]], series[name], strict=True))
        same = "the same at every T" if apart == 0 else f"within {apart:.1f} {unit} of each other"
        names = [CELL_LABELS[cell] for cell in group]
        said.append(f"{', '.join(names[:-1])} and {names[-1]} ({same})")
    if not said:
        return ""
    return ("Lines on top of one another: " + "; ".join(said)
            + ". Their markers and dashes tell them apart.")


def made_up_days(padding: np.ndarray) -> str:
    """The padding each shorter window is read through, per window: "1 made-up day of 0 % return
    each", "1-3 made-up days of 0 % return each (6 in all)". (Summed, "3 made-up days" read as
    3 for each.)"""
    low, high, total = int(padding.min()), int(padding.max()), int(padding.sum())
    days = f"made-up day{'s' if high != 1 else ''} of 0 % return"
    if len(padding) == 1:
        return f"{low} {days}"
    if low == high:
        return f"{low} {days} each"
    return f"{low}-{high} {days} each ({total} in all)"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms"


def run_time(result) -> tuple[str, str, str]:
    return ("Run time", ms(result.seconds),
            "The whole experiment, measured on the server when these settings first ran.")


def mistake(result: lab.Broken, did: str, *, caption: str = "The mistake",
            fix: str = "The fix") -> dict[str, tuple[tuple[str, str], ...]]:
    """What every mistake made on purpose shows: torch's own message, the code, the fix.

    ``did``: what the code did when torch raised, e.g. "The second `loss.backward()`".
    """
    return {"errors": ((did, result.error),),
            "code": ((caption, result.mistake), (fix, result.fix))}


def snapshot_table(*snapshots: lab.Snapshot) -> pd.DataFrame:
    return pd.DataFrame([{"moment": s.label, "nodes": s.saved.nodes,
                          "saved tensors held": s.saved.tensors, "saved bytes held": s.saved.bytes,
                          "freed by backward()": s.saved.freed,
                          "changed in place": s.saved.modified} for s in snapshots])


def _figure(data: list[dict], layout: dict, title: str, height: int = 380, subtitle: str = "") -> go.Figure:
    """A Lab chart, its words placed as every chart's are (``figures.frame``)."""
    return go.Figure({"data": data, "layout": {
        **frame(title, height, subtitle),
        "font": {"family": theme.FONT_FAMILY, "size": theme.FONT_SIZE},
        **with_automargin(layout)}})


@singledispatch
def report(result) -> Report:
    raise TypeError(f"no report for {type(result).__name__}")


@report.register
def _lengths(result: lab.LengthsResult) -> Report:
    lengths = np.array(result.lengths)
    nodes = [g.stats["nodes"] for g in result.window_graphs]
    by_length = {n: nodes[list(lengths).index(n)] for n in sorted(set(lengths))}
    counts = Counter(result.lengths)
    # "3 windows of 4 days", not "3 of 4 days": read as a share, that was a fraction
    mix = ", ".join(f"{counts[n]} window{'s' if counts[n] > 1 else ''} of {n} day{'s' if n > 1 else ''}"
                    for n in sorted(counts))
    short = lengths < lengths.max()
    gaps = result.padded_gaps
    longest = int(lengths.max())
    cut = CHOICE_LABELS["cut"][result.config.cut]
    shortest_i, longest_i = int(lengths.argmin()), int(lengths.argmax())
    table = pd.DataFrame({
        "window": result.labels, "days": result.lengths, "nodes of its own graph": nodes,
        "one by one": result.one_by_one, "packed": result.packed, "padded": result.padded,
        "|padded − one by one|": gaps})
    padded_note = (
        f"**Padded, not packed.** The seed model's `out[:, -1, :]` reads step {longest} for "
        f"every window, so the {int(short.sum())} shorter ones are read on through "
        f"{made_up_days(longest - lengths[short])}: their predictions "
        f"move by up to {gaps.max():.3g} (mean {gaps[short].mean():.3g}). The full-length ones: "
        f"{gap(gaps[~short].max())}.") if short.any() else (
        "**Padded, not packed.** Every window has the same length here, so there is no padding "
        "to leak: set two different lengths to see it.")
    # the window's first day (month-day) and its length: short enough for the axis
    ticks = [f"{label[-5:]} · {n} d" for label, n in zip(result.labels, result.lengths, strict=True)]
    data = [{"type": "scatter", "x": ticks, "y": values.tolist(),
             "mode": "markers", "name": name, "marker": {"color": COLOURS[name], "size": size_,
                                                        "symbol": symbol, "line": {"width": 3}}}
            for name, values, symbol, size_ in (("one by one", result.one_by_one, "circle-open", 18),
                                                ("packed", result.packed, "x", 11),
                                                ("padded", result.padded, "diamond", 11))]
    return Report(
        headline=f"{len(lengths)} windows of {result.config.lab_ticker.upper()}'s daily returns "
                 f"({result.config.lab_year}), cut {cut}: {mix}. The same untrained "
                 f"{CHOICE_LABELS['lab_cell'][result.config.lab_cell]} reads them three ways.",
        metrics=(
            ("Graphs, one by one", str(len(nodes)),
             "A Python loop over the windows: each forward pass records its own graph."),
            ("Their sizes", f"{min(nodes)}–{max(nodes)} nodes", "Longer windows, bigger graphs."),
            ("Packed: one graph", f"{result.packed_graph.stats['nodes']} nodes", ""),
            ("Loop vs packed", gap(result.packed_gap),
             f"Largest gap between the two predictions; the tests hold it under "
             f"{result.tolerance:.0e}."),
            ("Padded vs loop", f"≤ {gaps.max():.3g}", "Largest gap: the padding leaks in."),
            run_time(result),
        ),
        errors=(), code=(("Packed: each window's own last step, from h_n", lab.source(lab.predict_packed)),),
        notes=(
            "**One by one.** Each window runs alone at its own length, so autograd records one "
            "graph per window: " + ", ".join(f"{n} days → {c} nodes" for n, c in by_length.items())
            + ". The graph is as long as the data, because it is recorded while the loop runs.",
            f"**Packed.** `pack_padded_sequence` sorts the windows longest first (order "
            f"{list(result.sorted_indices)}) and records how many are still running at each step: "
            f"`batch_sizes = {list(result.batch_sizes)}`. The RNN runs each step on only those "
            f"(in the graph, step t's matmul is {result.batch_sizes[0]}×… wide at first, "
            f"{result.batch_sizes[-1]}×… at the last step), "
            f"so `h_n` holds each window's state after its own last day: the predictions equal the "
            f"loop's: {gap(result.packed_gap)}.",
            padded_note,
        ),
        graphs=(
            LabGraph("Shortest window alone", f"{result.labels[shortest_i]}: {lengths[shortest_i]} "
                     f"days, alone: {nodes[shortest_i]} nodes", result.window_graphs[shortest_i]),
            LabGraph("Longest window alone", f"{result.labels[longest_i]}: {lengths[longest_i]} "
                     f"days, alone: {nodes[longest_i]} nodes", result.window_graphs[longest_i]),
            LabGraph("Packed", f"Packed: one graph for all {len(lengths)} windows, "
                     f"{result.packed_graph.stats['nodes']} nodes", result.packed_graph),
            LabGraph("Padded", f"Padded: one graph, every window {longest} steps, "
                     f"{result.padded_graph.stats['nodes']} nodes", result.padded_graph),
        ),
        figures=((_figure(data, {"xaxis": {"title": {"text": "window: first day · trading days"}},
                                 "yaxis": {"title": {"text": "prediction"}}},
                          "Each window's prediction, three ways"),
                  "Scatter chart: one by one and packed predictions coincide; padded ones differ "
                  "for the short windows.",
                  "One by one and packed coincide: each cross sits inside its open circle."),),
        table=table,
    )


@report.register
def _twice(result: lab.TwiceResult) -> Report:
    b, a, kept = result.before, result.after, result.fixed
    return Report(
        headline="One forward pass, then `loss.backward()` twice: the second call fails, because "
                 "the first one freed what the graph had saved.",
        metrics=(
            ("Graph nodes", str(b.saved.nodes), "Before and after backward(): the nodes stay."),
            ("Saved before backward()", size(b.saved.bytes), f"{b.saved.tensors} tensors"),
            ("Saved after backward()", size(a.saved.bytes), f"{a.saved.freed} tensors freed"),
            ("With retain_graph=True", size(kept.saved.bytes), "Kept for a second pass."),
            ("fc.weight.grad, two passes", f"× {result.grad_ratio:.2f}",
             "Gradients add up: two passes give twice one pass's."),
            run_time(result),
        ),
        **mistake(result, "The second `loss.backward()`",
                  fix="The fix, if you really need two passes"),
        notes=(
            f"After the first `backward()` the graph's {a.saved.nodes} nodes are all still reachable "
            f"from `loss.grad_fn`; what went are the {a.saved.freed} tensors they saved "
            f"({size(b.saved.bytes)}), freed as soon as the pass used them.",
            f"`retain_graph=True` keeps them ({size(kept.saved.bytes)} held after the first pass), "
            "and the second pass adds its gradients to the first. Usually the right fix is "
            "another forward pass: it records a new graph.",
        ),
        graphs=(LabGraph("The graph", f"The graph both calls walk: {b.saved.nodes} nodes", b.graph),),
        figures=(), table=snapshot_table(b, a, kept),
    )


@report.register
def _carried(result: lab.DetachResult) -> Report:
    c = result.config
    carried, cut = result.retained, result.detached
    grow_nodes = carried[1].nodes - carried[0].nodes
    grow_bytes = carried[1].saved_bytes - carried[0].saved_bytes
    batches = [r.batch for r in carried]
    figure = _figure(
        [{"type": "scatter", "x": batches, "y": [r.nodes for r in rows], "mode": "lines+markers",
          "name": f"{name}: nodes", "line": {"color": COLOURS[name], "width": 3}}
         for name, rows in (("carried", carried), ("detached", cut))]
        + [{"type": "scatter", "x": batches, "y": [r.saved_bytes / 1024 for r in rows],
            "mode": "lines+markers", "name": f"{name}: saved KB", "yaxis": "y2",
            "line": {"color": COLOURS[name], "width": 2, "dash": "dot"}}
           for name, rows in (("carried", carried), ("detached", cut))],
        {"xaxis": {"title": {"text": "batch"}, "dtick": 1},
         "yaxis": {"title": {"text": "graph nodes (solid)"}, "rangemode": "tozero"},
         "yaxis2": {"title": {"text": "saved KB (dotted)"}, "overlaying": "y", "side": "right",
                    "rangemode": "tozero"}},
        "Graph behind each batch's loss")
    table = pd.DataFrame({"batch": batches,
                          "nodes, carried": [r.nodes for r in carried],
                          "saved bytes, carried": [r.saved_bytes for r in carried],
                          "backward ms, carried": [round(r.backward_ms, 2) for r in carried],
                          "nodes, detached": [r.nodes for r in cut],
                          "saved bytes, detached": [r.saved_bytes for r in cut],
                          "backward ms, detached": [round(r.backward_ms, 2) for r in cut]})
    return Report(
        headline=f"AAPL, IBM and MSFT read side by side, {c.lab_t} days a batch, {c.batches} batches "
                 "in a row; the hidden state is carried from each batch into the next.",
        metrics=(
            (f"Nodes at batch {c.batches}, carried", str(carried[-1].nodes),
             f"{grow_nodes:+d} per batch"),
            (f"Nodes at batch {c.batches}, detached", str(cut[-1].nodes), "the same every batch"),
            ("Saved, carried", size(carried[-1].saved_bytes), f"{size(grow_bytes)} more per batch"),
            ("Saved, detached", size(cut[-1].saved_bytes), ""),
            run_time(result),
        ),
        **mistake(result, f"`loss.backward()` at batch {result.failed_at}, hidden state not detached",
                  caption="The mistake: carry h as it is",
                  fix="The fix: detach() (truncated backpropagation through time)"),
        notes=(
            f"Batch {result.failed_at}'s graph starts where batch {result.failed_at - 1}'s ended: "
            "`h` still points into it, and that part was freed by the previous `backward()`.",
            f"`retain_graph=True` silences the error and makes it worse: each batch's graph spans "
            f"every batch before it, {grow_nodes:+d} nodes and {size(grow_bytes)} of saved tensors "
            f"per batch ({carried[-1].nodes} nodes at batch {c.batches}), each `backward()` walks "
            "all of it again and adds the old batches' gradients once more.",
            f"`h.detach()` keeps the numbers and drops the history: every batch's graph is "
            f"{cut[-1].nodes} nodes, and gradients flow back {c.lab_t} days, no further.",
        ),
        graphs=(LabGraph("Carried", f"Batch {c.batches}, carried: {carried[-1].nodes} nodes, one row "
                                    f"per batch (L0 = batch 1)", result.after.graph),
                LabGraph("Detached", f"Batch {c.batches}, detached: {cut[-1].nodes} nodes",
                         result.fixed.graph)),
        figures=((figure, "Line chart: nodes and saved bytes per batch grow when the hidden state "
                          "is carried, stay flat when it is detached.", ""),),
        table=table,
    )


@report.register
def _in_place(result: lab.InPlaceResult) -> Report:
    b, fixed = result.before, result.fixed
    return Report(
        headline=f"A for-loop over `nn.RNNCell` damps the hidden state by {lab.DAMPING} each day. "
                 "Done in place, it overwrites the tanh output autograd saved for backward.",
        metrics=(
            ("h._version after h.mul_()", str(result.version), "autograd saved h at version 0"),
            ("Saved tensors changed in place", str(b.saved.modified),
             "one per day: each step's tanh output"),
            ("Nodes, in place / fixed", f"{b.saved.nodes} / {fixed.saved.nodes}", ""),
            ("Fix runs backward()", "yes" if result.fix_ran else "no", ""),
            run_time(result),
        ),
        **mistake(result, "`loss.backward()` after `h.mul_()`"),
        notes=(
            "Every tensor keeps a version counter that in-place operations bump. A node that saved "
            "a tensor remembers its version; at backward time a different version means the value "
            "it needs is gone, and torch refuses rather than compute a wrong gradient.",
            f"Here `tanh` saved its output to compute its gradient (1 − tanh²), and `h.mul_()` "
            f"overwrote that very tensor: {b.saved.modified} saved tensors changed under the graph. "
            "`h = cell(x_t, h) * 0.9` makes a new tensor and leaves the saved one alone.",
        ),
        graphs=(LabGraph("In place", f"In place: {b.saved.nodes} nodes", b.graph),
                LabGraph("Out of place", f"Out of place: {fixed.saved.nodes} nodes", fixed.graph)),
        figures=(), table=snapshot_table(b, result.after, fixed),
    )


@report.register
def _nan(result: lab.NanResult) -> Report:
    nan_entries = sum(result.nan_grads.values())
    total = lab.BREAK_BATCH
    line = result.line
    module = f"stockdemo/lab/{Path(lab.nan_gradient.__file__).name}"
    where = (f"`{module}`, line {line.line}, in `{line.function}`: `{line.code}`"
             if line else f"no frame in {module} (see the traceback)")
    return Report(
        headline="The model predicts the variance of tomorrow's return; its square root is the "
                 "size of the move. `torch.where` keeps `sqrt` from negative variances, so the "
                 f"loss is a finite {result.loss:.3f}.",
        metrics=(
            ("Negative variances", f"{result.negative} of {total}", "an untrained model"),
            ("NaN gradient entries", str(nan_entries), "after a silent backward()"),
            ("NaN predictions after one step", f"{result.nan_after_step} of {total}",
             "one SGD step on those gradients"),
            ("Fix: gradients finite", "yes" if result.fix_ran else "no", ""),
            run_time(result),
        ),
        **mistake(result, "`loss.backward()` inside `torch.autograd.detect_anomaly()`"),
        notes=(
            f"Without anomaly mode `backward()` runs without a word and leaves NaN in "
            f"{nan_entries} gradient entries; one optimizer step later the model predicts NaN for "
            f"{result.nan_after_step} of {total} windows, and nothing says where it came from.",
            "`torch.where` picks values, not gradients: the gradient of `sqrt` at a negative "
            "number is NaN, and 0 × NaN is NaN.",
            f"Inside `torch.autograd.detect_anomaly()` backward stops at the first node that "
            f"returns NaN and prints the forward line that created it: {where}.",
        ),
        graphs=(LabGraph("The graph", f"The graph: {result.before.saved.nodes} nodes",
                         result.before.graph),),
        figures=(), table=None,
    )


@report.register
def _no_grad(result: lab.NoGradResult) -> Report:
    grad, off, inference = result.rows
    figure = _figure(
        [{"type": "bar", "x": [r.mode for r in result.rows], "y": [r.median_ms for r in result.rows],
          "marker": {"color": [theme.VERMILION, theme.BLUE, theme.GREEN]},
          "text": [f"{r.median_ms:.3f} ms, saved {size(r.saved_bytes)}" for r in result.rows],
          "textposition": "auto"}],
        {"yaxis": {"title": {"text": "median forward time (ms)"}}},
        "One forward pass, three ways", subtitle=f"median of {lab.TIMING_REPEATS} runs each")
    return Report(
        headline=f"The same forward pass ({result.config.lab_batch} windows of "
                 f"{result.config.lab_t} days) with autograd recording, under `torch.no_grad()` "
                 "and under `torch.inference_mode()`.",
        metrics=(
            ("Recorded", f"{grad.nodes} nodes · {size(grad.saved_bytes)}", f"{grad.median_ms:.3f} ms"),
            ("no_grad()", f"{off.nodes} nodes · {size(off.saved_bytes)}", f"{off.median_ms:.3f} ms"),
            ("inference_mode()", f"{inference.nodes} nodes · {size(inference.saved_bytes)}",
             f"{inference.median_ms:.3f} ms"),
            ("no_grad speed-up", f"× {result.speedup:.2f}", "median recorded / median no_grad"),
            run_time(result),
        ),
        errors=(("`loss.backward()` on a loss computed under `torch.no_grad()`", result.error),
                ("A head trained on features made under `torch.inference_mode()`",
                 result.inference_error)),
        code=(("The mistake", result.mistake), ("The fix", result.fix),
              ("And the other one", lab.source(lab.loss_under_no_grad))),
        notes=(
            f"Recording costs {grad.nodes} nodes and {size(grad.saved_bytes)} of saved tensors for "
            f"this pass; `no_grad()` records nothing, so there is nothing to walk back: "
            f"`backward()` has no `grad_fn` to start from.",
            "`inference_mode()` goes further: its tensors carry no version counter, so autograd may "
            "never save them. `clone()` outside it gives a normal tensor.",
        ),
        graphs=(LabGraph("Recorded", f"Recorded: {grad.nodes} nodes (under no_grad: nothing)",
                         result.before.graph),),
        figures=((figure, "Bar chart of median forward times: "
                  + ", ".join(f"{r.mode} {r.median_ms:.3f} ms" for r in result.rows), ""),),
        table=pd.DataFrame(result.rows),
    )


@report.register
def _cost(result: lab.CostResult) -> Report:
    c = result.config
    by_cell = {cell: [r for r in result.rows if r.cell == cell] for cell in lab.COST_CELLS}
    saved = {cell: [r.saved_bytes / 1024 for r in rows] for cell, rows in by_cell.items()}
    lines = [{"type": "scatter", "x": [r.seq_len for r in rows], "y": saved[cell],
              "mode": "lines+markers", "name": CELL_LABELS[cell], **CELL_STYLES[cell]}
             for cell, rows in by_cell.items()]
    relation = [{"type": "scatter", "x": [r.nodes for r in rows], "y": saved[cell],
                 "mode": "lines+markers", "name": CELL_LABELS[cell], **CELL_STYLES[cell]}
                for cell, rows in by_cell.items()]
    steps = {cell: result.per_step(cell) for cell in lab.COST_CELLS}
    per_node = {cell: b / n for cell, (n, b) in steps.items() if n}
    fused_nodes, fused_bytes = steps["lstm"]
    return Report(
        headline=f"Batch {c.lab_batch}, hidden {c.lab_hidden}: the memory autograd holds for "
                 f"backward, measured with `saved_tensors_hooks`, for T from 1 to {c.max_t}.",
        metrics=tuple((CELL_LABELS[cell], f"{size(b)} per step", f"{n:+.0f} nodes per step")
                      for cell, (n, b) in steps.items()) + (run_time(result),),
        errors=(), code=(("How it is counted", lab.source(lab.count_saved)),),
        notes=(
            "Where the graph grows with T, so does the memory: each recorded step saves what its "
            "backward needs. Per node, that is "
            + ", ".join(f"{CELL_LABELS[cell]} {size(v)}" for cell, v in per_node.items()) + ".",
            f"The fused `nn.LSTM` breaks the link: {fused_nodes:+.0f} nodes per step, yet "
            f"{size(fused_bytes)} more saved per step, the kernel's workspace for every step. "
            "Few nodes is not little memory.",
        ),
        graphs=(),
        figures=((_figure(lines, {"xaxis": {"title": {"text": "sequence length T"}},
                                  "yaxis": {"title": {"text": "saved for backward (KB)"},
                                            "rangemode": "tozero"}},
                          "Memory autograd holds, against T"),
                  "Line chart of saved kilobytes against T, one line per cell.",
                  overlap_caption(saved)),
                 (_figure(relation, {"xaxis": {"title": {"text": "graph nodes"}, "rangemode": "tozero"},
                                     "yaxis": {"title": {"text": "saved for backward (KB)"},
                                               "rangemode": "tozero"}},
                          "Memory against graph size"),
                  "Line chart of saved kilobytes against node count, one line per cell.", "")),
        table=pd.DataFrame(result.rows),
    )
