"""What the Lab shows for each mistake a run-time graph allows, made on purpose and fixed.

Backward twice, an undetached hidden state, an in-place change, a NaN, and no_grad:
each report holds torch's own message, the code that made the mistake and its fix,
and the graphs and numbers of the run. Every number comes from the result.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stockdemo import lab, theme
from stockdemo.lab.report import (
    COLOURS,
    LabGraph,
    Report,
    chart,
    mistake,
    run_time,
    size,
    snapshot_table,
)


def twice(result: lab.TwiceResult) -> Report:
    b, a, kept = result.before, result.after, result.fixed
    counts = b.graph.counts  # the one count of a graph's nodes, as every page counts them
    return Report(
        headline="One forward pass, then `loss.backward()` twice: the second call fails, because "
                 "the first one freed what the graph had saved.",
        metrics=(
            ("Graph nodes", f"{counts.nodes:,}",
             f"{counts.summary()}. Before and after backward(): the nodes stay."),
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
            f"After the first `backward()` the graph's {counts.nodes} nodes are all still there, "
            f"reachable from `loss.grad_fn`; what went are the {a.saved.freed} tensors they saved "
            f"({size(b.saved.bytes)}), freed as soon as the pass used them.",
            f"`retain_graph=True` keeps them ({size(kept.saved.bytes)} held after the first pass), "
            "and the second pass adds its gradients to the first. Usually the right fix is "
            "another forward pass: it records a new graph.",
        ),
        graphs=(LabGraph("The graph", f"The graph both calls walk: {counts.nodes} nodes", b.graph),),
        figures=(), table=snapshot_table(b, a, kept),
    )


def carried(result: lab.DetachResult) -> Report:
    c = result.config
    carried, cut = result.retained, result.detached
    grow_nodes = carried[1].nodes - carried[0].nodes
    grow_bytes = carried[1].saved_bytes - carried[0].saved_bytes
    batches = [r.batch for r in carried]
    figure = chart(
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


def in_place(result: lab.InPlaceResult) -> Report:
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


def nan(result: lab.NanResult) -> Report:
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


def no_grad(result: lab.NoGradResult) -> Report:
    grad, off, inference = result.rows
    figure = chart(
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
