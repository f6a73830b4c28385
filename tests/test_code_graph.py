"""graph/recorder.py: any run's autograd graph, each node on the caller's line and loop iteration."""

import linecache
from collections import Counter

import pytest
import torch
from torch import nn

from harness.autograd import ops_by_type
from stockdemo.graph.recorder import GraphTooBig, LineRecorder, raw_graph
from stockdemo.model import StockPredictor

LOOP = '''\
import torch
cell = torch.nn.RNNCell(3, 4)
x = torch.randn(2, 6, 3)
h = torch.zeros(2, 4)
for t in range(x.shape[1]):
    h = cell(x[:, t], h)
predictions = h.sum(dim=1, keepdim=True)
'''

NESTED = '''\
import torch
w = torch.ones(3, requires_grad=True)
y = w * 1
for outer in range(2):
    for inner in range(3):
        y = y * 2
predictions = y.sum()
'''


def _run(source: str, filename: str = "<your code>") -> tuple[dict, dict]:
    """Run ``source`` as a learner's script would run, recorded -> (raw graph, its namespace)."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {}
    try:
        with LineRecorder() as lines:
            exec(compile(source, filename, "exec"), namespace)
        params = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor)}
        module = namespace.get("cell")
        if isinstance(module, nn.Module):
            params.update(module.named_parameters())
        return raw_graph(namespace["predictions"], lines, params), namespace
    finally:
        linecache.cache.pop(filename, None)


def _ops(raw: dict) -> dict[str, int]:
    return dict(Counter(node["op"] for node in raw["nodes"]))


def test_the_seed_records_the_same_ops_by_type_as_autograds_own_walk():
    torch.manual_seed(0)
    model = StockPredictor(3, 10, 1, 1)
    with LineRecorder() as lines:
        predictions = model(torch.randn(10, 5, 3))
    raw = raw_graph(predictions, lines, dict(model.named_parameters()))
    assert _ops(raw) == ops_by_type(predictions)
    assert raw["output_shape"] == [10, 1]
    params = {n["param"] for n in raw["nodes"] if n["kind"] == "parameter"}
    assert params == {name for name, _ in model.named_parameters()}


def test_the_seeds_nodes_point_at_the_lines_of_forward_in_model_py():
    model = StockPredictor(3, 10, 1, 1)
    with LineRecorder() as lines:
        predictions = model(torch.randn(10, 5, 3))
    raw = raw_graph(predictions, lines)
    lines_hit = {raw["texts"][f"{n['file']}:{n['line']}"] for n in raw["nodes"] if n["line"]}
    assert {text.split("  #")[0] for text in lines_hit} == {
        "out, _ = self.rnn(x)", "return self.fc(out[:, -1, :])"}
    assert all(raw["files"][n["file"]].endswith("stockdemo/model.py")
               for n in raw["nodes"] if n["file"] is not None)


def test_a_hand_written_loop_tags_each_step_with_its_iteration():
    raw, namespace = _run(LOOP)
    assert _ops(raw) == ops_by_type(namespace["predictions"])
    body = [n for n in raw["nodes"] if n["line"] == 6]
    steps = sorted({n["loops"][0][2] for n in body})
    assert steps == list(range(6))
    assert all(n["loops"][0][:2] == [0, 5] for n in body)  # "<your code>", the for on line 5
    per_step = Counter(n["loops"][0][2] for n in body)
    assert len(set(per_step.values())) == 1  # every step made the same number of nodes
    last = [n for n in raw["nodes"] if n["line"] == 7]
    assert last and all(n["loops"] == [] for n in last)
    assert raw["texts"]["0:6"] == "h = cell(x[:, t], h)"


def test_an_inner_loop_counts_again_from_zero_in_each_outer_iteration():
    raw, namespace = _run(NESTED)
    muls = [n["loops"] for n in raw["nodes"] if n["line"] == 6]
    assert sorted((loops[0][2], loops[1][2]) for loops in muls) == [
        (o, i) for o in range(2) for i in range(3)]
    assert {(loops[0][1], loops[1][1]) for loops in muls} == {(4, 5)}
    assert _ops(raw) == ops_by_type(namespace["predictions"])


def test_a_node_used_twice_by_one_op_gives_two_edges():
    w = torch.ones(2, requires_grad=True)
    raw = raw_graph((w * w).sum(), params={"w": w})
    mul = next(i for i, n in enumerate(raw["nodes"]) if n["op"] == "MulBackward0")
    leaf = next(i for i, n in enumerate(raw["nodes"]) if n["kind"] == "parameter")
    assert raw["edges"].count([leaf, mul]) == 2


def test_a_graph_past_the_limit_is_refused_while_walking():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(50):
        y = y + 1
    with pytest.raises(GraphTooBig, match="more than 20"):
        raw_graph(y, max_nodes=20)


def test_an_output_without_grad_fn_says_why():
    with pytest.raises(ValueError, match="no grad_fn"):
        raw_graph(torch.ones(3))
    with pytest.raises(ValueError, match="expected a tensor"):
        raw_graph([1, 2])


def test_the_recorder_leaves_the_previous_tracer_in_place():
    import sys

    def tracer(frame, event, arg):
        return None

    sys.settrace(tracer)
    try:
        with LineRecorder():
            torch.ones(1, requires_grad=True) * 2
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(None)


def test_the_replay_visits_every_op_once_and_the_leaf_norms_are_autograds_own():
    torch.manual_seed(0)
    model = StockPredictor(3, 10, 1, 1)
    x = torch.randn(10, 5, 3)
    grads = torch.autograd.grad(model(x).sum(), list(model.parameters()))
    predictions = model(x)
    raw = raw_graph(predictions, params=dict(model.named_parameters()), replay=True)
    replay = raw["replay"]
    ops = [i for i, n in enumerate(raw["nodes"]) if n["kind"] == "op"]
    assert sorted(i for i, _ in replay["backward"]) == ops
    assert replay["backward"][0][0] == 0  # the engine starts at the output's own node
    by_name = dict(zip([name for name, _ in model.named_parameters()], grads, strict=True))
    for index, norm in replay["leaf_norms"].items():
        name = raw["nodes"][int(index)]["param"]
        assert norm == pytest.approx(float(torch.linalg.vector_norm(by_name[name])), rel=1e-5)
    assert all(p.grad is None for p in model.parameters())  # the model is left as it was
    assert "backward through the graph a second time" in replay["second_error"]
    assert replay["error"] is None
    assert sum(n for n, _ in replay["saved"]) > 0


def test_an_in_place_change_to_a_saved_tensor_fails_in_the_replay_with_torchs_message():
    def run() -> tuple[torch.Tensor, torch.Tensor]:
        w = torch.ones(3, requires_grad=True)
        y = torch.sigmoid(w)
        z = y * 2
        y.add_(1)  # sigmoid saved its output: backward needs it as it was
        return w, z

    w, z = run()
    with pytest.raises(RuntimeError) as torchs:
        z.sum().backward()
    w, z = run()
    raw = raw_graph(z, params={"w": w}, replay=True)
    assert raw["replay"]["error"] == str(torchs.value)
    assert "modified by an inplace operation" in raw["replay"]["error"]


def test_the_replay_leaves_gradients_the_model_already_had_unchanged():
    torch.manual_seed(0)
    model = StockPredictor(3, 10, 1, 1)
    x = torch.randn(10, 5, 3)
    model(x).sum().backward()
    before = [p.grad.clone() for p in model.parameters()]
    raw_graph(model(x), params=dict(model.named_parameters()), replay=True)
    assert all(torch.equal(p.grad, b) for p, b in zip(model.parameters(), before, strict=True))


MODULE = '''\
import torch
from torch import nn

HEADER = """a string at the top level,
with lines the function's part must not need"""


class Unrolled(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 4)

    @torch.no_grad()
    def unused(self):
        return None

    def forward(self, x):
        h = torch.zeros(x.shape[0], 4)
        for t in range(x.shape[1]):
            h = self.cell(
                x[:, t],
                h,
            )
        return h.sum(
            dim=1,
        )
''' + "\n# filler\n" * 400


def test_a_models_loops_come_from_its_own_function_not_the_whole_module(monkeypatch):
    """A model in a long module: only its forward is parsed, and its loop is still counted
    step by step (a call split over lines, a closing bracket alone on the last line)."""
    import ast

    filename = "/virtual/unrolled_model.py"
    linecache.cache[filename] = (len(MODULE), None, MODULE.splitlines(True), filename)
    namespace: dict = {"__name__": "unrolled_model"}
    exec(compile(MODULE, filename, "exec"), namespace)
    model = namespace["Unrolled"]()
    parsed: list[int] = []  # the lines of each text parsed from the model's file
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, name="<unknown>", *a, **k: (
        name == filename and parsed.append(source.count("\n"))) or real_parse(source, name, *a, **k))
    try:
        with LineRecorder() as lines:
            out = model(torch.randn(2, 5, 3))
        raw = raw_graph(out, lines, dict(model.named_parameters()))
    finally:
        linecache.cache.pop(filename, None)
    assert parsed and max(parsed) < 20, parsed  # forward's lines, not the module's 430
    header = MODULE.splitlines().index("        for t in range(x.shape[1]):") + 1
    steps = sorted({n["loops"][-1][2] for n in raw["nodes"] if n["loops"]})
    assert steps == [0, 1, 2, 3, 4]
    assert {n["loops"][-1][1] for n in raw["nodes"] if n["loops"]} == {header}
    assert raw["texts"][f"0:{header}"] == "for t in range(x.shape[1]):"
