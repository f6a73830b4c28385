"""The replay of a run, checked against torch itself: an independent run with the same seed,
its own walk, its own hooks, torch.autograd.grad, and anomaly mode's own stack traces."""

import inspect
import json
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from torch.autograd.graph import GradientEdge

from harness.autograd import grad_fns
from harness.helpers import ROOT
from stockdemo.cells import CELLS
from stockdemo.config import TRAIN_BATCH_SIZE, RunConfig, TrainConfig
from stockdemo.graph import HEAD, STEP
from stockdemo.live.run import build, run
from stockdemo.model import LoopRNN, StockPredictor
from stockdemo.replay.model import trace_first_training_step, trace_run, trace_training_step
from stockdemo.train import training as train
from stockdemo.train.prices import load_dataset

SIZES = ((1, 1), (3, 2), (6, 1))  # (seq_len, num_layers)
CASES = [(cell, t, layers) for cell in CELLS for t, layers in SIZES]
MODEL_FILE = os.path.join(str(ROOT), "stockdemo", "model.py")
FRAME = re.compile(r'File "(?P<file>.*)", line (?P<line>\d+), in (?P<function>\S+)\n(?P<text>.*)\n')


def config_of(cell: str, seq_len: int, layers: int) -> RunConfig:
    return RunConfig(cell=cell, seq_len=seq_len, num_layers=layers, hidden_size=4, batch_size=3)


def op_grad_fns(output: torch.Tensor) -> list:
    """Every op grad_fn behind ``output`` (harness's walk), in creation order."""
    ops = [fn for fn in grad_fns(output) if not hasattr(fn, "variable")]  # AccumulateGrad holds the leaf
    return sorted(ops, key=lambda fn: fn._sequence_nr())


def independent_run(config: RunConfig, anomaly: bool = False):
    x, model = build(config)
    with torch.enable_grad(), torch.autograd.set_detect_anomaly(anomaly, check_nan=False):
        output = model(x)
    return x, model, output


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[0]}-T{c[1]}-L{c[2]}")
def case(request):
    config = config_of(*request.param)
    return config, trace_run(config), run(config).graph


def test_trace_names_the_nodes_of_the_same_run(case):
    config, trace, graph = case
    assert set(trace.forward) == {n.id for n in graph.op_nodes}
    assert len(trace.forward) == len(set(trace.forward))


def test_forward_order_is_the_creation_order(case):
    config, trace, graph = case
    _, _, output = independent_run(config)
    ops = op_grad_fns(output)
    assert [graph.by_id[i].op for i in trace.forward] == [fn.name() for fn in ops]
    shapes = [tuple(fn._input_metadata[0].shape) if len(fn._input_metadata) == 1 else None for fn in ops]
    assert [graph.by_id[i].shape for i in trace.forward] == shapes


def test_backward_order_is_the_order_our_own_hooks_fire_in(case):
    config, trace, graph = case
    _, _, output = independent_run(config)
    ops = op_grad_fns(output)
    fired = []
    for k, fn in enumerate(ops):
        fn.register_prehook(lambda grads, k=k: fired.append(k))
    output.sum().backward()
    forward_index = {node_id: k for k, node_id in enumerate(trace.forward)}
    assert [forward_index[s.node_id] for s in trace.backward] == fired


def test_every_gradient_norm_matches_autograd_grad(case):
    config, trace, graph = case
    _, model, output = independent_run(config)
    ops = op_grad_fns(output)
    edges = [(k, GradientEdge(fn, out)) for k, fn in enumerate(ops)
             for out in range(len(fn._input_metadata))]
    grads = torch.autograd.grad(output.sum(), [e for _, e in edges], allow_unused=True,
                                retain_graph=True)
    squares = [0.0] * len(ops)
    for (k, _), g in zip(edges, grads, strict=True):
        if g is not None:
            squares[k] += float(g.double().square().sum())
    forward_index = {node_id: k for k, node_id in enumerate(trace.forward)}
    for step in trace.backward:
        expected = math.sqrt(squares[forward_index[step.node_id]])
        assert step.grad_norm == pytest.approx(expected, rel=1e-5, abs=1e-7), step.node_id
    params = dict(model.named_parameters())
    param_grads = torch.autograd.grad(output.sum(), list(params.values()))
    expected = {f"param/{name}": float(g.norm()) for name, g in zip(params, param_grads, strict=True)}
    assert trace.param_grad_norms == pytest.approx(expected, rel=1e-5)


def test_every_op_runs_in_backward_once(case):
    config, trace, graph = case
    assert sorted(s.node_id for s in trace.backward) == sorted(trace.forward)


def test_source_lines_are_the_ones_anomaly_mode_records(case):
    config, trace, graph = case
    _, _, output = independent_run(config, anomaly=True)
    for node_id, fn in zip(trace.forward, op_grad_fns(output), strict=True):
        ours = [m for entry in fn.metadata["traceback_"] if (m := FRAME.search(entry))
                and os.path.dirname(m["file"]) == os.path.dirname(MODEL_FILE)]
        innermost = ours[-1]
        line = trace.source[node_id]
        assert (line.line, line.function, line.text) == \
            (int(innermost["line"]), innermost["function"], innermost["text"].strip())
        assert os.path.join(str(ROOT), line.file) == innermost["file"]


def lines_of(function) -> set[int]:
    code, first = inspect.getsourcelines(function)
    return set(range(first, first + len(code)))


def test_recurrent_and_head_ops_point_into_the_models_forward(case):
    config, trace, graph = case
    predictor, loop = lines_of(StockPredictor.forward), lines_of(LoopRNN.forward)
    for node in graph.op_nodes:
        line = trace.source[node.id]
        assert line.file == "stockdemo/model.py" and line.function == "forward", node.id
        if node.role == HEAD:
            assert line.line in predictor, node.id
        elif config.is_loop:  # every step's ops come from the loop's own forward
            assert line.line in loop, node.id
        else:
            assert line.line in predictor and "self.rnn(x)" in line.text, node.id
    last = trace.source[trace.forward[-1]]  # the predictions' own node
    assert "self.fc(" in last.text


def test_the_code_panel_holds_every_source_line(case):
    config, trace, graph = case
    assert set(trace.source.values()) <= set(trace.forward_code)


def test_step_of_each_forward_entry_is_its_nodes_step(case):
    config, trace, graph = case
    for node_id, t in zip(trace.forward, trace.step_of_frame, strict=True):
        node = graph.by_id[node_id]
        assert t == (node.step if node.role == STEP else None)


def test_saved_tensors_are_the_ones_autograd_packed(case):
    config, trace, graph = case
    x, model = build(config)
    packed = []
    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(
            lambda t: packed.append(t.numel() * t.element_size()) or t, lambda t: t):
        model(x)
    assert sum(n for n, _ in trace.saved.values()) == len(packed)
    assert sum(b for _, b in trace.saved.values()) == sum(packed)


def test_second_backward_raises_torchs_own_error(case):
    config, trace, graph = case
    _, _, output = independent_run(config)
    root = output.sum()
    root.backward()
    with pytest.raises(RuntimeError) as error:
        root.backward()
    assert "Trying to backward through the graph a second time" in str(error.value)
    assert trace.second_backward_error == str(error.value)


def test_forward_code_is_the_models_source():
    trace = trace_run(RunConfig(cell="gru_loop", seq_len=2))
    lines = open(MODEL_FILE, encoding="utf-8").read().splitlines()
    functions = {c.function for c in trace.forward_code}
    assert functions == {"forward"}
    for c in trace.forward_code:
        assert c.file == "stockdemo/model.py"
        assert lines[c.line - 1] == " " * c.indent + c.text
    texts = [c.text for c in trace.forward_code]
    assert "out, _ = self.rnn(x)" in texts and any(t.startswith("for x_t in") for t in texts)
    assert not any(t.startswith("for x_t in") for t in
                   (c.text for c in trace_run(RunConfig(cell="gru")).forward_code))


def test_training_step_replays_the_loss_and_leaves_the_model_alone():
    config = config_of("gru", 4, 2)
    x, model = build(config)
    y = torch.randn(config.batch_size, 1)
    trace = trace_training_step(model, x, y)
    assert all(p.grad is None for p in model.parameters())
    graph = train.training_step_graph(model, x, y)
    assert set(trace.forward) == {n.id for n in graph.op_nodes}
    assert trace.root != trace_run(config).root
    first = trace.backward[0]
    assert graph.by_id[first.node_id].op == "MseLossBackward0" and first.grad_norm == pytest.approx(1.0)
    loss = torch.nn.functional.mse_loss(model(x), y)
    params = dict(model.named_parameters())
    grads = torch.autograd.grad(loss, list(params.values()))
    expected = {f"param/{name}": float(g.norm()) for name, g in zip(params, grads, strict=True)}
    assert trace.param_grad_norms == pytest.approx(expected, rel=1e-5)
    assert "Trying to backward through the graph a second time" in trace.second_backward_error
    loss_line = trace.source[first.node_id]  # the line that computed the loss is on the panel too
    assert "mse_loss(" in loss_line.text and loss_line in trace.forward_code


def test_command_line_prints_the_replay_as_json():
    out = subprocess.run(
        [sys.executable, "-m", "stockdemo", "trace", "--seq-len", "3", "--cell", "gru",
         "--hidden-size", "4"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    data = json.loads(out)
    trace = trace_run(RunConfig(seq_len=3, cell="gru", hidden_size=4))
    assert data["forward"] == list(trace.forward)
    assert [(s["node"], s["grad_norm"]) for s in data["backward"]] == \
        [(s.node_id, s.grad_norm) for s in trace.backward]
    assert data["root"] == trace.root and data["param_grad_norms"] == trace.param_grad_norms
    assert {k: v["line"] for k, v in data["source"].items()} == \
        {k: v.line for k, v in trace.source.items()}


def test_first_training_step_has_the_train_pages_graph_and_its_first_gradients():
    config = TrainConfig(epochs=1, seq_len=4, hidden_size=6, cell="gru_loop")
    dataset, _ = load_dataset(config)
    trace = trace_first_training_step(dataset, config)
    result = train.run_training(dataset, config)
    assert set(trace.forward) == {n.id for n in result.step_graph.op_nodes}
    assert result.step_graph.by_id[trace.backward[0].node_id].op == "MseLossBackward0"
    # the first batch train() draws, and a fresh model as it builds one
    _, model = build(config.model_config)
    part = dataset.part("train")
    first = torch.randperm(len(dataset.x[part]), generator=torch.Generator().manual_seed(config.seed))
    first = first[:TRAIN_BATCH_SIZE]
    x = torch.from_numpy(dataset.x[part])[first]
    y = torch.from_numpy(dataset.y[part]).unsqueeze(1)[first]
    params = dict(model.named_parameters())
    grads = torch.autograd.grad(torch.nn.functional.mse_loss(model(x), y), list(params.values()))
    expected = {f"param/{name}": float(g.norm()) for name, g in zip(params, grads, strict=True)}
    assert trace.param_grad_norms == pytest.approx(expected, rel=1e-5)


def test_replays_in_parallel_threads_do_not_mix():
    """The Streamlit server runs sessions in threads: each replay must see only its own calls."""
    configs = [config_of("lstm_loop", 6, 2), config_of("gru", 7, 1)] * 2
    alone = [trace_run(c) for c in configs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(trace_run, configs))
    for a, b in zip(alone, together, strict=True):
        assert (a.forward, a.source, a.backward) == (b.forward, b.source, b.backward)
