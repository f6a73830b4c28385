"""The replay of any recorded run (stockdemo.replay.record), checked against torch itself."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from harness.autograd import grad_fns
from stockdemo.graph.ids import graph_of_record
from stockdemo.graph.recorder import LineRecorder, raw_graph
from stockdemo.replay.record import trace_of_record

HIDDEN = 5


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, HIDDEN)
        self.fc = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], HIDDEN)
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)  # the loop's line
        return self.fc(torch.tanh(h))


def build(steps: int = 4) -> tuple[Stepper, torch.Tensor]:
    torch.manual_seed(0)
    model = Stepper()
    return model, torch.randn(2, steps, 3)  # x: (batch, T, features)


def recorded(steps: int = 4, **options):
    model, x = build(steps)
    lines = LineRecorder()
    with lines:
        out = model(x)
    raw = raw_graph(out, lines, dict(model.named_parameters()), replay=True)
    graph = graph_of_record(raw)
    return out, raw, graph, trace_of_record(raw, graph, **options)


def hooked_backward(steps: int = 4) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """The same run again, hooked by this test: (op, incoming grad norm) in the engine's
    order, and every parameter's .grad norm."""
    model, x = build(steps)
    out = model(x)
    order = grad_fns(out)
    seen: list[tuple[str, float]] = []

    def hook(fn):
        def prehook(grads):
            seen.append((fn.name(), math.sqrt(sum(float(g.norm()) ** 2 for g in grads if g is not None))))
        return prehook

    handles = [fn.register_prehook(hook(fn)) for fn in order if not hasattr(fn, "variable")]
    out.sum().backward()
    for handle in handles:
        handle.remove()
    return seen, {name: float(p.grad.norm()) for name, p in model.named_parameters()}


def test_forward_replays_the_ops_in_autograds_creation_order():
    out, _, graph, trace = recorded()
    order = grad_fns(out)
    ops = sorted((fn for fn in order if not hasattr(fn, "variable")), key=lambda fn: fn._sequence_nr())
    assert [graph.by_id[i].op for i in trace.forward] == [fn.name() for fn in ops]
    assert len(set(trace.forward)) == len(trace.forward)


def test_backward_is_the_engines_order_with_the_norms_a_hook_of_our_own_sees():
    _, _, graph, trace = recorded()
    seen, _ = hooked_backward()
    got = [(graph.by_id[s.node_id].op, s.grad_norm) for s in trace.backward]
    assert [op for op, _ in got] == [op for op, _ in seen]
    assert [n for _, n in got] == pytest.approx([n for _, n in seen], rel=1e-6)
    assert got[0][1] == pytest.approx(math.sqrt(2))  # d(out.sum())/d(out) is ones, out is (2, 1)


def test_parameter_norms_are_the_gradients_backward_leaves():
    _, _, _, trace = recorded()
    _, norms = hooked_backward()
    assert {k.removeprefix("param/"): v for k, v in trace.param_grad_norms.items()} == pytest.approx(norms)


def test_each_op_knows_its_line_its_function_and_the_loops_iteration():
    _, _, _, trace = recorded(steps=4)
    in_loop = [(node_id, step) for node_id, step in zip(trace.forward, trace.step_of_frame, strict=True)
               if trace.source[node_id].text.endswith("# the loop's line")]
    assert [step for _, step in in_loop] == sorted(step for _, step in in_loop)
    assert {step for _, step in in_loop} == {0, 1, 2, 3}
    line = trace.source[in_loop[0][0]]
    assert (line.file, line.function, line.indent) == (__file__, "forward", 12)
    assert line.text == "h = self.cell(x[:, t], h)  # the loop's line"


def test_code_panel_is_the_whole_forward_that_made_the_nodes():
    _, _, _, trace = recorded()
    texts = [s.text for s in trace.forward_code]
    start = texts.index("def forward(self, x):")
    assert texts[start:start + 5] == [
        "def forward(self, x):", "h = x.new_zeros(x.shape[0], HIDDEN)", "for t in range(x.shape[1]):",
        "h = self.cell(x[:, t], h)  # the loop's line", "return self.fc(torch.tanh(h))"]
    assert [s.indent for s in trace.forward_code[start:start + 5]] == [4, 8, 8, 12, 8]


def test_saved_tensors_are_what_autograd_kept():
    out, _, graph, trace = recorded()
    tanh = [i for i in trace.forward if graph.by_id[i].op == "TanhBackward0"]
    assert tanh  # the cell's and forward's own
    # tanh saves its result for backward: one (batch, hidden) float tensor
    assert {trace.saved[i] for i in tanh} == {(1, 2 * HIDDEN * out.element_size())}


def test_the_second_backward_error_is_torchs_own():
    _, _, _, trace = recorded()
    assert "Trying to backward through the graph a second time" in trace.second_backward_error


def test_file_label_names_the_files_as_the_view_prints_them():
    _, _, _, trace = recorded(file_label=lambda name: "Cell In[7]")
    assert {s.file for s in trace.source.values()} == {"Cell In[7]"}


def test_a_record_without_replay_is_refused():
    model, x = build()
    raw = raw_graph(model(x))
    with pytest.raises(ValueError, match="replay=True"):
        trace_of_record(raw, graph_of_record(raw))
