"""The core: seed parity, the graph is autograd's own, growth per step, bad configs."""

import contextlib
import inspect
import io
import re
from collections import Counter

import pytest
import torch
from torch import nn

from harness.autograd import grad_fns
from stockdemo import RunConfig, StockPredictor, capture_graph, graph_diff, run
from stockdemo.cells import CELLS
from stockdemo.config import KNOBS, RUN_KNOBS
from stockdemo.graph import FUSED_OP, op_name
from stockdemo.live.reproduce import reproduce_code
from stockdemo.live.run import build
from stockdemo.model import LoopRNN
from stockdemo.render.dot import render_dot

MAX = RunConfig(seq_len=200, hidden_size=256, num_layers=4, batch_size=64, input_size=16)


def recorded_grad_fns(output: torch.Tensor) -> Counter:
    """Every grad_fn autograd recorded behind ``output``, by name (harness's independent walk)."""
    return Counter(fn.name() for fn in grad_fns(output))


@pytest.mark.parametrize("seed", [0, 1, 42, 2024, 123456])
def test_seed_parity_with_the_snippet_run_by_hand(seed):
    torch.manual_seed(seed)
    x = torch.randn(10, 5, 3)
    m = StockPredictor(3, 10, 1, 1)
    expected = m(x)
    result = run(RunConfig(seed=seed))
    assert result.predictions.shape == (10, 1)
    assert torch.equal(result.predictions, expected.detach())


def test_seed_snippet_model_is_the_seed_architecture():
    m = StockPredictor(input_dim=3, hidden_dim=10, num_layers=1, output_dim=1)
    assert type(m.rnn) is nn.RNN and m.rnn.batch_first
    assert isinstance(m.fc, nn.Linear) and m.fc.out_features == 1


def test_defaults_are_the_seed_example():
    c = RunConfig()
    assert (c.batch_size, c.seq_len, c.input_size, c.hidden_size, c.num_layers, c.cell) == \
        (10, 5, 3, 10, 1, "rnn")
    assert (KNOBS["seq_len"].high, KNOBS["hidden_size"].high, KNOBS["num_layers"].high,
            KNOBS["batch_size"].high) >= (200, 256, 4, 64)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("size", ["small", "max"])
def test_op_nodes_are_exactly_the_recorded_grad_fns(cell, size):
    config = RunConfig(cell=cell) if size == "small" else MAX.replace(cell=cell, batch_size=2,
                                                                       hidden_size=8)
    x, model = build(config)
    out = model(x)
    graph = capture_graph(out, model, x)
    recorded = recorded_grad_fns(out)
    accumulate = recorded.pop("torch::autograd::AccumulateGrad")
    assert Counter(n.op for n in graph.op_nodes) == recorded
    params = [n for n in graph.nodes if n.kind == "parameter"]
    assert len(params) == accumulate == len(list(model.parameters()))
    assert graph.stats["nodes"] == sum(recorded.values()) + accumulate + 2  # + input, output


def test_max_size_gru_has_about_eleven_thousand_nodes_without_recursion_error():
    result = run(MAX.replace(cell="gru", batch_size=1, hidden_size=4, input_size=1))
    assert 10_000 < result.graph.stats["nodes"] < 12_000


@pytest.mark.parametrize("cell", ["rnn", "gru", "rnn_loop", "gru_loop", "lstm_loop"])
@pytest.mark.parametrize("layers", [1, 3])
def test_graph_grows_one_block_per_step_per_layer(cell, layers):
    sizes = [run(RunConfig(cell=cell, num_layers=layers, seq_len=t)).graph.stats["nodes"]
             for t in (4, 5, 6, 7)]
    steps = [b - a for a, b in zip(sizes, sizes[1:], strict=False)]
    assert steps[0] > 0 and len(set(steps)) == 1, sizes
    a = run(RunConfig(cell=cell, num_layers=layers, seq_len=5)).graph
    b = run(RunConfig(cell=cell, num_layers=layers, seq_len=6)).graph
    diff = graph_diff(a, b)
    added = Counter((n.layer, n.step) for n in diff.added_nodes)
    assert set(added) == {(layer, 5) for layer in range(layers)}
    assert not diff.removed_nodes


def test_fused_lstm_graph_stays_the_same_size_and_says_why():
    graphs = [run(RunConfig(cell="lstm", seq_len=t, num_layers=2)).graph for t in (2, 5, 50)]
    assert len({g.stats["nodes"] for g in graphs}) == 1
    fused = [n for n in graphs[0].op_nodes if op_name(n.op) == FUSED_OP]
    assert len(fused) == 2 and [n.layer for n in fused] == [0, 1]
    assert graphs[0].meta["fused"] and "fused" in graphs[0].meta["backend"]
    assert graph_diff(graphs[0], graphs[2]).added_nodes == ()


def test_nodes_say_where_they_belong_and_what_they_are():
    g = run(RunConfig(num_layers=2)).graph
    by_id = g.by_id
    assert by_id["input"].shape == (10, 5, 3) and by_id["output"].shape == (10, 1)
    assert by_id["param/rnn.weight_hh_l1"].kind == "parameter"
    assert by_id["param/rnn.weight_hh_l1"].layer == 1
    assert by_id["L1.t4/Tanh0"].step == 4 and by_id["L1.t4/Tanh0"].shape == (10, 10)
    assert by_id["head/Select0"].label == "last step"
    assert not any("Backward" in n.label or "18446744073709551615" in n.label for n in g.nodes)
    assert ("input", "L0.pre/Mm0") in g.edges
    assert ("head/Addmm0", "output") in g.edges


def test_loop_variant_wires_the_input_into_every_step():
    g = run(RunConfig(cell="gru_loop", seq_len=4)).graph
    fed = {g.by_id[dst].step for src, dst in g.edges if src == "input"}
    assert fed == {0, 1, 2, 3}


@pytest.mark.parametrize("cell", ["rnn", "gru", "gru_loop"])
def test_single_step_run_places_its_step_like_longer_runs(cell):
    one = run(RunConfig(seq_len=1, cell=cell)).graph
    two = run(RunConfig(seq_len=2, cell=cell)).graph
    diff = graph_diff(one, two)
    assert {n.step for n in diff.added_nodes if n.role == "step"} == {1}
    assert {n.id for n in one.op_nodes if n.step == 0} == \
        {n.id for n in two.op_nodes if n.step == 0}
    # torch itself projects a single step's input differently (Addmm, not Mm + Add):
    # that shows up in the set-up block only.
    assert {n.role for n in (*diff.removed_nodes, *diff.added_nodes) if n.step is None} <= {"pre"}


@pytest.mark.parametrize("cell", CELLS)
def test_the_reproduced_code_run_by_hand_gives_the_runs_predictions(cell):
    config = RunConfig(cell=cell, seq_len=6, num_layers=2, hidden_size=7, seed=11)
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(reproduce_code(config), namespace)  # a fresh module's globals, as a script has
    assert torch.equal(namespace["predictions"].detach(), run(config).predictions)
    assert printed.getvalue().startswith("tensor(")


@pytest.mark.parametrize("cell", CELLS)
def test_the_reproduced_codes_classes_are_model_py_source_text(cell):
    """No second StockPredictor or LoopRNN in a string: the code shows model.py's own classes."""
    code = reproduce_code(RunConfig(cell=cell))
    classes = [LoopRNN, StockPredictor] if cell.endswith("_loop") else [StockPredictor]
    written = [m.start() for m in re.finditer(r"^class ", code, re.MULTILINE)]
    assert len(written) == len(classes)
    for start, cls in zip(written, classes, strict=True):
        assert code[start:].startswith(inspect.getsource(cls))


def test_the_seeds_reproduced_code_builds_the_model_as_the_snippet_does():
    code = reproduce_code(RunConfig())
    assert "model = StockPredictor(input_dim=3, hidden_dim=10,\n" in code
    assert "num_layers=1, output_dim=1)\n" in code and "rnn=" not in code.split("torch.manual_seed")[1]


def test_diff_of_identical_runs_is_empty_and_hidden_size_only_reshapes():
    a, b = run(RunConfig()).graph, run(RunConfig()).graph
    assert graph_diff(a, b).is_empty
    c = run(RunConfig(hidden_size=20)).graph
    d = graph_diff(a, c)
    assert not d.added_nodes and not d.removed_nodes and d.reshaped_nodes


@pytest.mark.parametrize("params,expected,fragment", [
    ({"seq_len": "0"}, {"seq_len": 1}, "outside"),
    ({"hidden_size": "-1"}, {"hidden_size": 1}, "outside"),
    ({"num_layers": "99"}, {"num_layers": 4}, "outside"),
    ({"cell": "foo"}, {"cell": "rnn"}, "not one of"),
    ({"seq_len": "abc"}, {"seq_len": 5}, "not a number"),
    ({"batch_size": "nan"}, {"batch_size": 10}, "not a finite number"),
    ({"batch_size": "1e309"}, {"batch_size": 10}, "not a finite number"),
    ({"seed": "9" * 200}, {"seed": 0}, "too long"),
    ({"seq_len": "7.6"}, {"seq_len": 8}, "rounded"),
    ({"seq_len": ["3", "9"]}, {"seq_len": 9}, None),
    ({"cell": " GRU "}, {"cell": "gru"}, None),
    ({"cell": "nn.GRU"}, {"cell": "gru"}, None),  # as a bound select box writes it
    ({"cell": "for-loop over  nn.LSTMCell"}, {"cell": "lstm_loop"}, None),
])
def test_bad_config_values_are_clamped_or_rejected_with_a_message(params, expected, fragment):
    config, messages = RunConfig.from_params(params)
    for key, value in expected.items():
        assert getattr(config, key) == value
    if fragment:
        assert len(messages) == 1 and fragment in messages[0]
    else:
        assert messages == []


def test_from_params_ignores_unknown_keys_and_non_mappings():
    config, messages = RunConfig.from_params({"evil": "<script>", "seq_len": "6"})
    assert config.seq_len == 6 and messages == []
    assert RunConfig.from_params(None)[0] == RunConfig()


def test_run_config_refuses_out_of_bounds_values_in_code():
    with pytest.raises(ValueError):
        RunConfig(seq_len=0)
    with pytest.raises(TypeError):
        RunConfig(seq_len="5")


def test_to_params_round_trips_through_from_params():
    c = RunConfig(seq_len=17, cell="lstm_loop", seed=7)
    assert RunConfig.from_params(c.to_params()) == (c, [])
    assert set(c.to_params()) == {"seq_len", "cell", "seed"}


def test_run_reports_stage_timings():
    t = run(RunConfig()).timings_ms
    assert set(t) == {"build", "forward", "capture"} and all(v >= 0 for v in t.values())


@pytest.mark.parametrize("knob", RUN_KNOBS, ids=lambda k: k.name)
def test_every_knob_parses_its_own_default_silently(knob):
    assert knob.parse(str(knob.default)) == (knob.default, None)


def test_render_views_and_node_budget():
    small = render_dot(run(RunConfig()).graph, "auto")
    assert small.view == "unrolled" and "t = 4" in small.dot
    big_graph = run(RunConfig(seq_len=120, cell="gru")).graph
    big = render_dot(big_graph, "auto")
    assert big.view == "rolled" and "× 120" in big.dot
    assert f"{big_graph.stats['nodes']:,} nodes" in big.caption
    forced = render_dot(big_graph, "unrolled")
    assert forced.folded_steps > 0 and forced.drawn_nodes < big_graph.stats["nodes"]


def test_no_dot_label_starts_with_a_newline():
    for cell in CELLS:
        for view in ("rolled", "unrolled"):
            dot = render_dot(run(RunConfig(cell=cell, num_layers=2)).graph, view).dot
            assert 'label="\\n' not in dot and "label=<\n" not in dot


def test_every_drawn_node_is_pinned():
    rendering = render_dot(run(RunConfig(num_layers=2, cell="gru")).graph, "unrolled")
    statements = re.findall(r"^\t(\S.*?) \[", rendering.dot, re.M)
    nodes = [s for s in statements if "->" not in s and s not in ("graph", "node", "edge")]
    pinned = re.findall(r'pos="-?[\d.]+,-?[\d.]+!"', rendering.dot)
    assert len(nodes) >= rendering.drawn_nodes and len(pinned) == len(nodes)
