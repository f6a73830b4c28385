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
from stockdemo.i18n import N_, Message, later, later_n
from stockdemo.i18n.deferred import later_day, later_list, later_number, later_significant
from stockdemo.lab import COST_CELLS
from stockdemo.lab import mistakes as lab_mistakes
from stockdemo.lab.report import (
    COLOURS,
    ONE_BY_ONE,
    PACKED,
    PADDED,
    LabGraph,
    Report,
    chart,
    days,
    gap,
    nodes,
    run_time,
    size,
)
from stockdemo.shared_figure import SharedFigure

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


def overlap_caption(series: dict[str, list[float]]) -> Message | str:
    """Which cells' lines (in KB) lie on one another, said under the chart, and how they are told apart."""
    said = []
    for group in coinciding(series):
        apart = max(abs(a - b) for name in group[1:]
                    for a, b in zip(series[group[0]], series[name], strict=True))
        same = later("the same at every T") if apart == 0 else later(
            "within {kb} KB of each other", kb=later_number(apart, 1))
        said.append(later("{cells} ({same})", cells=later_list(later(CELL_LABELS[cell]) for cell in group),
                          same=same))
    if not said:
        return ""
    return later("Lines on top of one another: {groups}. Their markers and dashes tell them apart.",
                 groups=later_list(said, semicolons=True))


def made_up_days(padding: np.ndarray) -> Message:
    """The padding each shorter window is read through, per window: "1 made-up day of 0 % return
    each", "1-3 made-up days of 0 % return each (6 in all)". (Summed, "3 made-up days" read as
    3 for each.)"""
    low, high, total = int(padding.min()), int(padding.max()), int(padding.sum())
    if len(padding) == 1:
        return later_n("{n} made-up day of 0 % return", "{n} made-up days of 0 % return", low)
    if low == high:
        return later_n("{n} made-up day of 0 % return each", "{n} made-up days of 0 % return each", low)
    return later("{low}-{high} made-up days of 0 % return each ({total} in all)",
                 low=low, high=high, total=total)


def _padded_note(result: lab.LengthsResult) -> Message:
    """What reading the padding does to the shorter windows' predictions."""
    lengths, gaps = np.array(result.lengths), result.padded_gaps
    short = lengths < lengths.max()
    if not short.any():
        return later("**Padded, not packed.** Every window has the same length here, so there is no "
                     "padding to leak: set two different lengths to see it.")
    return later_n(
        "**Padded, not packed.** The seed model's `out[:, -1, :]` reads step {longest} for every "
        "window, so the {n} shorter one is read on through {padding}: its prediction moves by up to "
        "{most} (mean {mean}). The full-length ones: {full}.",
        "**Padded, not packed.** The seed model's `out[:, -1, :]` reads step {longest} for every "
        "window, so the {n} shorter ones are read on through {padding}: their predictions move by up "
        "to {most} (mean {mean}). The full-length ones: {full}.",
        int(short.sum()), longest=int(lengths.max()), padding=made_up_days(lengths.max() - lengths[short]),
        most=later_significant(gaps.max()), mean=later_significant(gaps[short].mean()),
        full=gap(gaps[~short].max()))


def _window(result: lab.LengthsResult, i: int) -> Message:
    """Window ``i`` as the learner cut it: "week of Jan 3, 2012", "from Jan 3, 2012"."""
    first = later_day(result.firsts[i])
    if result.config.cut == "weeks":
        return later("week of {day}", day=first)
    return later("from {day}", day=first)


def _alone(result: lab.LengthsResult, i: int, sizes: list[int]) -> Message:
    """The caption of window ``i``'s own graph."""
    return later("{window}: {days}, alone: {nodes}", window=_window(result, i),
                 days=days(result.lengths[i]), nodes=nodes(sizes[i]))


def _lengths_notes(result: lab.LengthsResult, sizes: list[int]) -> tuple[Message, ...]:
    """One by one, packed, padded: what each way of reading the batch records and predicts."""
    lengths = list(result.lengths)
    by_length = {n: sizes[lengths.index(n)] for n in sorted(set(lengths))}
    one_by_one = later_list(later("{days} → {nodes}", days=days(n), nodes=nodes(c))
                            for n, c in by_length.items())
    return (
        later("**One by one.** Each window runs alone at its own length, so autograd records one graph "
              "per window: {sizes}. The graph is as long as the data, because it is recorded while the "
              "loop runs.", sizes=one_by_one),
        later("**Packed.** `pack_padded_sequence` sorts the windows longest first (order {order}) and "
              "records how many are still running at each step: `batch_sizes = {batch_sizes}`. The RNN "
              "runs each step on only those (in the graph, step t's matmul is {first}×… wide at first, "
              "{last}×… at the last step), so `h_n` holds each window's state after its own last day: "
              "the predictions equal the loop's: {gap}.", order=str(list(result.sorted_indices)),
              batch_sizes=str(list(result.batch_sizes)), first=result.batch_sizes[0],
              last=result.batch_sizes[-1], gap=gap(result.packed_gap)),
        _padded_note(result),
    )


def _lengths_chart(result: lab.LengthsResult) -> SharedFigure:
    """Each window's prediction, three ways: the window's first day and its length along x."""
    ticks = [later("{day} · {days} d", day=later_day(first, "MMMd"), days=n)
             for first, n in zip(result.firsts, result.lengths, strict=True)]
    data = [{"type": "scatter", "x": ticks, "y": values.tolist(),
             "mode": "markers", "name": later(name), "marker": {"color": COLOURS[name], "size": size_,
                                                               "symbol": symbol, "line": {"width": 3}}}
            for name, values, symbol, size_ in ((ONE_BY_ONE, result.one_by_one, "circle-open", 18),
                                                (PACKED, result.packed, "x", 11),
                                                (PADDED, result.padded, "diamond", 11))]
    return chart(data, {"xaxis": {"title": {"text": later("window: first day · trading days")}},
                        "yaxis": {"title": {"text": later("prediction")}}},
                 later("Each window's prediction, three ways"))


def _lengths(result: lab.LengthsResult) -> Report:
    lengths = np.array(result.lengths)
    sizes = [int(g.stats["nodes"]) for g in result.window_graphs]
    counts = Counter(result.lengths)
    # "3 windows of 4 days", not "3 of 4 days": read as a share, that was a fraction
    mix = later_list(later_n("{n} window of {days}", "{n} windows of {days}", counts[n], days=days(n))
                     for n in sorted(counts))
    gaps = result.padded_gaps
    shortest_i, longest_i = int(lengths.argmin()), int(lengths.argmax())
    packed_nodes = result.packed_graph.stats["nodes"]
    config = result.config
    cut, cell = CHOICE_LABELS["cut"][config.cut], CHOICE_LABELS["lab_cell"][config.lab_cell]  # msgids
    return Report(
        headline=later("{n} windows of {ticker}'s daily returns ({year}), cut {cut}: {mix}. The same "
                       "untrained {cell} reads them three ways.", n=len(lengths),
                       ticker=config.lab_ticker.upper(), year=str(config.lab_year),
                       cut=later(cut), mix=mix, cell=later(cell)),
        metrics=(
            (later("Graphs, one by one"), later_number(len(sizes)),
             later("A Python loop over the windows: each forward pass records its own graph.")),
            (later("Their sizes"), later("{low}–{high} nodes", low=min(sizes), high=max(sizes)),
             later("Longer windows, bigger graphs.")),
            (later("Packed: one graph"), nodes(packed_nodes), ""),
            (later("Loop vs packed"), gap(result.packed_gap),
             later("Largest gap between the two predictions; the tests hold it under {tolerance}.",
                   tolerance=f"{result.tolerance:.0e}")),
            (later("Padded vs loop"), later("≤ {gap}", gap=later_significant(gaps.max())),
             later("Largest gap: the padding leaks in.")),
            run_time(result),
        ),
        errors=(), code=((later("Packed: each window's own last step, from h_n"),
                          lab.source(lab.predict_packed)),),
        notes=_lengths_notes(result, sizes),
        graphs=(
            LabGraph(N_("Shortest window alone"), _alone(result, shortest_i, sizes),
                     result.window_graphs[shortest_i]),
            LabGraph(N_("Longest window alone"), _alone(result, longest_i, sizes),
                     result.window_graphs[longest_i]),
            LabGraph(N_("Packed"), later("Packed: one graph for all {n} windows, {nodes}", n=len(lengths),
                                         nodes=nodes(packed_nodes)), result.packed_graph),
            LabGraph(N_("Padded"), later("Padded: one graph, every window {steps} long, {nodes}",
                                         steps=later_n("{n} step", "{n} steps", int(lengths.max())),
                                         nodes=nodes(result.padded_graph.stats["nodes"])),
                     result.padded_graph),
        ),
        figures=((_lengths_chart(result),
                  later("Scatter chart: one by one and packed predictions coincide; padded ones differ "
                        "for the short windows."),
                  later("One by one and packed coincide: each cross sits inside its open circle.")),),
        table=pd.DataFrame({
            N_("first day"): result.firsts, N_("days"): result.lengths, N_("nodes of its own graph"): sizes,
            ONE_BY_ONE: result.one_by_one, PACKED: result.packed, PADDED: result.padded,
            N_("|padded − one by one|"): gaps}),
    )


def _per_node(steps: dict[str, tuple[float, float]]) -> Message:
    """The bytes each cell saves per node it records, as a list in words."""
    return later_list(later("{cell} {size}", cell=later(CELL_LABELS[cell]), size=size(b / n))
                      for cell, (n, b) in steps.items() if n)


def _cost_charts(result: lab.CostResult) -> tuple[tuple[SharedFigure, Message, Message | str], ...]:
    """Saved KB against T, and against the graph's nodes: one line per cell."""
    by_cell = {cell: [r for r in result.rows if r.cell == cell] for cell in lab.COST_CELLS}
    saved = {cell: [r.saved_bytes / 1024 for r in rows] for cell, rows in by_cell.items()}
    kb_saved = {"title": {"text": later("saved for backward (KB)")}, "rangemode": "tozero"}

    def lines(x: str) -> list[dict]:
        return [{"type": "scatter", "x": [getattr(r, x) for r in rows], "y": saved[cell],
                 "mode": "lines+markers", "name": later(CELL_LABELS[cell]), **CELL_STYLES[cell]}
                for cell, rows in by_cell.items()]

    return ((chart(lines("seq_len"), {"xaxis": {"title": {"text": later("sequence length T")}},
                                      "yaxis": kb_saved},
                   later("Memory autograd holds, against T")),
             later("Line chart of saved kilobytes against T, one line per cell."), overlap_caption(saved)),
            (chart(lines("nodes"), {"xaxis": {"title": {"text": later("graph nodes")}, "rangemode": "tozero"},
                                    "yaxis": kb_saved},
                   later("Memory against graph size")),
             later("Line chart of saved kilobytes against node count, one line per cell."), ""))


def _cost(result: lab.CostResult) -> Report:
    c = result.config
    steps = {cell: result.per_step(cell) for cell in lab.COST_CELLS}
    fused_nodes, fused_bytes = steps["lstm"]
    return Report(
        headline=later("Batch {batch}, hidden {hidden}: the memory autograd holds for backward, measured "
                       "with `saved_tensors_hooks`, for T from 1 to {longest}.", batch=c.lab_batch,
                       hidden=c.lab_hidden, longest=c.max_t),
        metrics=tuple((later(CELL_LABELS[cell]), later("{size} per step", size=size(b)),
                       later_n("{n} node per step", "{n} nodes per step", round(n), n=f"{n:+.0f}"))
                      for cell, (n, b) in steps.items()) + (run_time(result),),
        errors=(), code=((later("How it is counted"), lab.source(lab.count_saved)),),
        notes=(
            later("Where the graph grows with T, so does the memory: each recorded step saves what its "
                  "backward needs. Per node, that is {per_node}.", per_node=_per_node(steps)),
            later("The fused `nn.LSTM` breaks the link: {nodes} nodes per step, yet {size} more saved "
                  "per step, the kernel's workspace for every step. Few nodes is not little memory.",
                  nodes=f"{fused_nodes:+.0f}", size=size(fused_bytes)),
        ),
        graphs=(),
        figures=_cost_charts(result),
        table=pd.DataFrame({N_("cell"): [CELL_LABELS[r.cell] for r in result.rows],
                            N_("sequence length T"): [r.seq_len for r in result.rows],
                            N_("nodes"): [r.nodes for r in result.rows],
                            N_("saved tensors"): [r.saved_tensors for r in result.rows],
                            N_("saved bytes"): [r.saved_bytes for r in result.rows]}),
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
