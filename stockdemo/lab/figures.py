"""What the Lab page shows for each experiment: sentences, numbers, graphs and charts.

``report(result)`` turns any Lab result into a ``Report`` (stockdemo/lab/report.py), so
the page only lays it out. Every number in it comes from the result, that is from the
run. The batch of different lengths and the graph's memory cost are reported here; the
mistakes made on purpose in stockdemo/lab/mistakes.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pandas as pd

from stockdemo import lab, theme
from stockdemo.cells import CELL_LABELS
from stockdemo.config import CHOICE_LABELS
from stockdemo.lab import COST_CELLS
from stockdemo.lab import mistakes as lab_mistakes
from stockdemo.lab.report import COLOURS, LabGraph, Report, chart, gap, run_time, size

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
        figures=((chart(data, {"xaxis": {"title": {"text": "window: first day · trading days"}},
                                 "yaxis": {"title": {"text": "prediction"}}},
                          "Each window's prediction, three ways"),
                  "Scatter chart: one by one and packed predictions coincide; padded ones differ "
                  "for the short windows.",
                  "One by one and packed coincide: each cross sits inside its open circle."),),
        table=table,
    )


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
        figures=((chart(lines, {"xaxis": {"title": {"text": "sequence length T"}},
                                  "yaxis": {"title": {"text": "saved for backward (KB)"},
                                            "rangemode": "tozero"}},
                          "Memory autograd holds, against T"),
                  "Line chart of saved kilobytes against T, one line per cell.",
                  overlap_caption(saved)),
                 (chart(relation, {"xaxis": {"title": {"text": "graph nodes"}, "rangemode": "tozero"},
                                     "yaxis": {"title": {"text": "saved for backward (KB)"},
                                               "rangemode": "tozero"}},
                          "Memory against graph size"),
                  "Line chart of saved kilobytes against node count, one line per cell.", "")),
        table=pd.DataFrame(result.rows),
    )


REPORTS: dict[type, Callable[..., Report]] = {
    lab.LengthsResult: _lengths,
    lab.TwiceResult: lab_mistakes.twice,
    lab.DetachResult: lab_mistakes.carried,
    lab.InPlaceResult: lab_mistakes.in_place,
    lab.NanResult: lab_mistakes.nan,
    lab.NoGradResult: lab_mistakes.no_grad,
    lab.CostResult: _cost,
}


def report(result) -> Report:
    """Any Lab experiment's result -> what the page shows of it."""
    build = REPORTS.get(type(result))
    if build is None:
        raise TypeError(f"no report for {type(result).__name__}")
    return build(result)
