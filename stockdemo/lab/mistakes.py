"""What the Lab shows for each mistake a run-time graph allows, made on purpose and fixed.

Backward twice, an undetached hidden state, an in-place change, a NaN, and no_grad:
each report holds torch's own message, the code that made the mistake and its fix,
and the graphs and numbers of the run. Every number comes from the result; every word is
a Message, said in each reader's language (stockdemo/lab/report.py).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stockdemo import lab, theme
from stockdemo.i18n import N_, Message, later, later_n
from stockdemo.i18n.deferred import later_list, later_number
from stockdemo.lab.report import (
    CARRIED,
    COLOURS,
    DETACHED,
    LabGraph,
    Report,
    chart,
    days,
    mistake,
    ms,
    nodes,
    run_time,
    size,
    snapshot_table,
)
from stockdemo.shared_figure import SharedFigure


def _yes(done: bool) -> Message:
    return later("yes") if done else later("no")


def _of(count: int, total: int) -> Message:
    return later("{count} of {total}", count=count, total=total)


def twice(result: lab.TwiceResult) -> Report:
    b, a, kept = result.before, result.after, result.fixed
    counts = b.graph.counts  # the one count of a graph's nodes, as every page counts them
    return Report(
        headline=later("One forward pass, then `loss.backward()` twice: the second call fails, because "
                       "the first one freed what the graph had saved."),
        metrics=(
            (later("Graph nodes"), later_number(counts.nodes),
             later("{summary}. Before and after backward(): the nodes stay.", summary=counts.summary())),
            (later("Saved before backward()"), size(b.saved.bytes),
             later_n("{n} tensor", "{n} tensors", b.saved.tensors)),
            (later("Saved after backward()"), size(a.saved.bytes),
             later_n("{n} tensor freed", "{n} tensors freed", a.saved.freed)),
            (later("With retain_graph=True"), size(kept.saved.bytes), later("Kept for a second pass.")),
            (later("fc.weight.grad, two passes"),
             later("× {ratio}", ratio=later_number(result.grad_ratio, 2)),
             later("Gradients add up: two passes give twice one pass's.")),
            run_time(result),
        ),
        **mistake(result, later("The second `loss.backward()`"),
                  fix=later("The fix, if you really need two passes")),
        notes=(
            later("After the first `backward()` the graph's {nodes} nodes are all still reachable from "
                  "`loss.grad_fn`; what went are the {freed} tensors they saved ({size}), freed as soon "
                  "as the pass used them.", nodes=counts.nodes, freed=a.saved.freed,
                  size=size(b.saved.bytes)),
            later("`retain_graph=True` keeps them ({size} held after the first pass), and the second "
                  "pass adds its gradients to the first. Usually the right fix is another forward pass: "
                  "it records a new graph.", size=size(kept.saved.bytes)),
        ),
        graphs=(LabGraph(N_("The graph"), later("The graph both calls walk: {nodes}",
                                                nodes=nodes(counts.nodes)), b.graph),),
        figures=(), table=snapshot_table(b, a, kept),
    )


def _carried_figure(carried: tuple[lab.BatchRow, ...], cut: tuple[lab.BatchRow, ...]) -> SharedFigure:
    """Nodes (solid) and saved KB (dotted) behind each batch's loss, carried and detached."""
    batches = [r.batch for r in carried]
    ways = ((CARRIED, carried), (DETACHED, cut))
    return chart(
        [{"type": "scatter", "x": batches, "y": [r.nodes for r in rows], "mode": "lines+markers",
          "name": later("{way}: nodes", way=later(way)), "line": {"color": COLOURS[way], "width": 3}}
         for way, rows in ways]
        + [{"type": "scatter", "x": batches, "y": [r.saved_bytes / 1024 for r in rows],
            "mode": "lines+markers", "name": later("{way}: saved KB", way=later(way)), "yaxis": "y2",
            "line": {"color": COLOURS[way], "width": 2, "dash": "dot"}}
           for way, rows in ways],
        {"xaxis": {"title": {"text": later("batch")}, "dtick": 1},
         "yaxis": {"title": {"text": later("graph nodes (solid)")}, "rangemode": "tozero"},
         "yaxis2": {"title": {"text": later("saved KB (dotted)")}, "overlaying": "y", "side": "right",
                    "rangemode": "tozero"}},
        later("Graph behind each batch's loss"))


def carried(result: lab.DetachResult) -> Report:
    c = result.config
    carried, cut = result.retained, result.detached
    grow_nodes = carried[1].nodes - carried[0].nodes
    grow_bytes = carried[1].saved_bytes - carried[0].saved_bytes
    table = pd.DataFrame({N_("batch"): [r.batch for r in carried],
                          N_("nodes, carried"): [r.nodes for r in carried],
                          N_("saved bytes, carried"): [r.saved_bytes for r in carried],
                          N_("backward ms, carried"): [round(r.backward_ms, 2) for r in carried],
                          N_("nodes, detached"): [r.nodes for r in cut],
                          N_("saved bytes, detached"): [r.saved_bytes for r in cut],
                          N_("backward ms, detached"): [round(r.backward_ms, 2) for r in cut]})
    return Report(
        headline=later("AAPL, IBM and MSFT read side by side, {days} a batch, {batches} batches in a row; "
                       "the hidden state is carried from each batch into the next.",
                       days=days(c.lab_t), batches=c.batches),
        metrics=(
            (later("Nodes at batch {batch}, carried", batch=c.batches), later_number(carried[-1].nodes),
             later("{nodes} per batch", nodes=f"{grow_nodes:+d}")),
            (later("Nodes at batch {batch}, detached", batch=c.batches), later_number(cut[-1].nodes),
             later("the same every batch")),
            (later("Saved, carried"), size(carried[-1].saved_bytes),
             later("{size} more per batch", size=size(grow_bytes))),
            (later("Saved, detached"), size(cut[-1].saved_bytes), ""),
            run_time(result),
        ),
        **mistake(result, later("`loss.backward()` at batch {batch}, hidden state not detached",
                                batch=result.failed_at),
                  caption=later("The mistake: carry h as it is"),
                  fix=later("The fix: detach() (truncated backpropagation through time)")),
        notes=(
            later("Batch {batch}'s graph starts where batch {previous}'s ended: `h` still points into it, "
                  "and that part was freed by the previous `backward()`.", batch=result.failed_at,
                  previous=result.failed_at - 1),
            later("`retain_graph=True` silences the error and makes it worse: each batch's graph spans "
                  "every batch before it, {nodes} nodes and {size} of saved tensors per batch ({total} "
                  "nodes at batch {batch}), each `backward()` walks all of it again and adds the old "
                  "batches' gradients once more.", nodes=f"{grow_nodes:+d}", size=size(grow_bytes),
                  total=carried[-1].nodes, batch=c.batches),
            later("`h.detach()` keeps the numbers and drops the history: every batch's graph is {nodes} "
                  "nodes, and gradients flow back {days}, no further.", nodes=cut[-1].nodes,
                  days=days(c.lab_t)),
        ),
        graphs=(LabGraph(N_("Carried"), later("Batch {batch}, carried: {nodes}, one row per batch "
                                              "(L0 = batch 1)", batch=c.batches,
                                              nodes=nodes(carried[-1].nodes)), result.after.graph),
                LabGraph(N_("Detached"), later("Batch {batch}, detached: {nodes}", batch=c.batches,
                                               nodes=nodes(cut[-1].nodes)), result.fixed.graph)),
        figures=((_carried_figure(carried, cut),
                  later("Line chart: nodes and saved bytes per batch grow when the hidden state is "
                        "carried, stay flat when it is detached."), ""),),
        table=table,
    )


def in_place(result: lab.InPlaceResult) -> Report:
    b, fixed = result.before, result.fixed
    return Report(
        headline=later("A for-loop over `nn.RNNCell` damps the hidden state by {damping} each day. Done "
                       "in place, it overwrites the tanh output autograd saved for backward.",
                       damping=lab.DAMPING),
        metrics=(
            (later("h._version after h.mul_()"), later_number(result.version),
             later("autograd saved h at version 0")),
            (later("Saved tensors changed in place"), later_number(b.saved.modified),
             later("one per day: each step's tanh output")),
            (later("Nodes, in place / fixed"), later("{before} / {after}", before=b.saved.nodes,
                                                      after=fixed.saved.nodes), ""),
            (later("Fix runs backward()"), _yes(result.fix_ran), ""),
            run_time(result),
        ),
        **mistake(result, later("`loss.backward()` after `h.mul_()`")),
        notes=(
            later("Every tensor keeps a version counter that in-place operations bump. A node that saved "
                  "a tensor remembers its version; at backward time a different version means the value "
                  "it needs is gone, and torch refuses rather than compute a wrong gradient."),
            later("Here `tanh` saved its output to compute its gradient (1 − tanh²), and `h.mul_()` "
                  "overwrote that very tensor: {n} saved tensors changed under the graph. "
                  "`h = cell(x_t, h) * 0.9` makes a new tensor and leaves the saved one alone.",
                  n=b.saved.modified),
        ),
        graphs=(LabGraph(N_("In place"), later("In place: {nodes}", nodes=nodes(b.saved.nodes)), b.graph),
                LabGraph(N_("Out of place"), later("Out of place: {nodes}", nodes=nodes(fixed.saved.nodes)),
                         fixed.graph)),
        figures=(), table=snapshot_table(b, result.after, fixed),
    )


def _nan_where(result: lab.NanResult) -> Message:
    """The forward line anomaly mode named, in this module's words."""
    line = result.line
    module = f"stockdemo/lab/{Path(lab.nan_gradient.__file__).name}"
    if line is None:
        return later("no frame in {module} (see the traceback)", module=module)
    return later("`{module}`, line {line}, in `{function}`: `{code}`", module=module,
                 line=str(line.line), function=line.function, code=line.code)


def nan(result: lab.NanResult) -> Report:
    nan_entries = sum(result.nan_grads.values())
    total = lab.BREAK_BATCH
    return Report(
        headline=later("The model predicts the variance of tomorrow's return; its square root is the size "
                       "of the move. `torch.where` keeps `sqrt` from negative variances, so the loss is a "
                       "finite {loss}.", loss=later_number(result.loss, 3)),
        metrics=(
            (later("Negative variances"), _of(result.negative, total), later("an untrained model")),
            (later("NaN gradient entries"), later_number(nan_entries), later("after a silent backward()")),
            (later("NaN predictions after one step"), _of(result.nan_after_step, total),
             later("one SGD step on those gradients")),
            (later("Fix: gradients finite"), _yes(result.fix_ran), ""),
            run_time(result),
        ),
        **mistake(result, later("`loss.backward()` inside `torch.autograd.detect_anomaly()`")),
        notes=(
            later("Without anomaly mode `backward()` runs without a word and leaves NaN in {entries} "
                  "gradient entries; one optimizer step later the model predicts NaN for {count} of "
                  "{total} windows, and nothing says where it came from.", entries=nan_entries,
                  count=result.nan_after_step, total=total),
            later("`torch.where` picks values, not gradients: the gradient of `sqrt` at a negative number "
                  "is NaN, and 0 × NaN is NaN."),
            later("Inside `torch.autograd.detect_anomaly()` backward stops at the first node that returns "
                  "NaN and prints the forward line that created it: {where}.", where=_nan_where(result)),
        ),
        graphs=(LabGraph(N_("The graph"), later("The graph: {nodes}", nodes=nodes(result.before.saved.nodes)),
                         result.before.graph),),
        figures=(), table=None,
    )


def _modes_figure(result: lab.NoGradResult) -> SharedFigure:
    """The median forward time of each mode, with what it saved."""
    rows = result.rows
    return chart(
        [{"type": "bar", "x": [later(r.mode) for r in rows], "y": [r.median_ms for r in rows],
          "marker": {"color": [theme.VERMILION, theme.BLUE, theme.GREEN]},
          "text": [later("{time}, saved {size}", time=ms(r.median_ms / 1e3, 3), size=size(r.saved_bytes))
                   for r in rows],
          "textposition": "auto"}],
        {"yaxis": {"title": {"text": later("median forward time (ms)")}}},
        later("One forward pass, three ways"),
        subtitle=later("median of {n} runs each", n=lab.TIMING_REPEATS))


def _modes_table(result: lab.NoGradResult) -> pd.DataFrame:
    rows = result.rows
    return pd.DataFrame({N_("mode"): [r.mode for r in rows],
                         N_("median forward ms"): [r.median_ms for r in rows],
                         N_("nodes"): [r.nodes for r in rows],
                         N_("saved bytes"): [r.saved_bytes for r in rows],
                         N_("requires grad"): [r.requires_grad for r in rows]})


def no_grad(result: lab.NoGradResult) -> Report:
    grad, off, inference = result.rows
    config = result.config
    times = later_list(later("{mode} {time}", mode=later(r.mode), time=ms(r.median_ms / 1e3, 3))
                       for r in result.rows)
    return Report(
        headline=later("The same forward pass ({windows} windows of {days}) with autograd recording, "
                       "under `torch.no_grad()` and under `torch.inference_mode()`.",
                       windows=config.lab_batch, days=days(config.lab_t)),
        metrics=tuple((label, later("{nodes} · {size}", nodes=nodes(row.nodes), size=size(row.saved_bytes)),
                       ms(row.median_ms / 1e3, 3))
                      for label, row in ((later("Recorded"), grad), ("no_grad()", off),
                                         ("inference_mode()", inference)))
        + ((later("no_grad speed-up"), later("× {ratio}", ratio=later_number(result.speedup, 2)),
            later("median recorded / median no_grad")),
           run_time(result)),
        errors=((later("`loss.backward()` on a loss computed under `torch.no_grad()`"), result.error),
                (later("A head trained on features made under `torch.inference_mode()`"),
                 result.inference_error)),
        code=((later("The mistake"), result.mistake), (later("The fix"), result.fix),
              (later("And the other one"), lab.source(lab.loss_under_no_grad))),
        notes=(
            later("Recording costs {nodes} nodes and {size} of saved tensors for this pass; `no_grad()` "
                  "records nothing, so there is nothing to walk back: `backward()` has no `grad_fn` to "
                  "start from.", nodes=grad.nodes, size=size(grad.saved_bytes)),
            later("`inference_mode()` goes further: its tensors carry no version counter, so autograd may "
                  "never save them. `clone()` outside it gives a normal tensor."),
        ),
        graphs=(LabGraph(N_("Recorded"), later("Recorded: {nodes} (under no_grad: nothing)",
                                               nodes=nodes(grad.nodes)), result.before.graph),),
        figures=((_modes_figure(result), later("Bar chart of median forward times: {times}", times=times),
                  ""),),
        table=_modes_table(result),
    )
