"""One definition of a node: every place that prints a count for a run agrees, and says what it counts.

The seed's count is one number on every surface: the Playground, Your code, the notebook
widget and the command line (``NodeCounts``, in ``stockdemo.graph``).

The expected counts come from torch itself (a walk of ``grad_fn.next_functions``),
not from ``stockdemo.graph``; then one config goes through every place that
prints a count: the Playground's metrics and captions, the replay's status
words, the lesson's answers, the node table and the command line.
"""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

import stockdemo
from harness.autograd import counted
from harness.helpers import ROOT, command_lines, graph_sent, metric, metric_deltas, metric_help, plotly_values
from stockdemo import RunConfig, lesson, run
from stockdemo.code.view import drawing_of_run
from stockdemo.graph import NodeCounts, count_nodes
from stockdemo.lab.experiment import BREAK_BATCH, BreakConfig, mse, seeded_model
from stockdemo.lab.prices import price_windows
from stockdemo.layout.steps import layout
from stockdemo.live.run import build
from stockdemo.render.node_table import node_table
from stockdemo.sandbox.seed import SEED_CODE

PLAYGROUND = str(ROOT / "pages" / "playground.py")
SEED = RunConfig()  # the seed snippet's run: where the issue found 38, 36 and 30 for one graph
CONFIGS = [SEED, RunConfig(cell="gru", num_layers=2, seq_len=7), RunConfig(cell="lstm_loop", seq_len=3)]


def counted_by_torch(config: RunConfig) -> dict[str, int]:
    """The run's autograd graph counted straight from torch: its grad_fns and AccumulateGrads."""
    x, model = build(config)
    return counted(model(x))


def summary_of(c: dict[str, int]) -> str:
    return (f"{c['nodes']:,} nodes: {c['operations']:,} operations, {c['parameters']} parameter "
            "tensors, the input and the output")


@pytest.fixture(scope="module")
def command_line(tmp_path_factory) -> dict:
    """Every command line this module checks, each its own process, all run at once -> the
    finished processes by (config, "dot" | "json" | "trace"), the seed's script as "code",
    and the files written by the same keys under "files"."""
    folder = tmp_path_factory.mktemp("command_line")
    runs, files = {}, {}
    for i, config in enumerate(CONFIGS):
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in config.to_params().items()]
        files[config, "dot"], files[config, "trace"] = folder / f"run{i}.dot", folder / f"trace{i}.json"
        runs[config, "dot"] = ["graph", *flags, "-o", str(files[config, "dot"])]
        runs[config, "json"] = ["graph", *flags, "--format", "json"]
        runs[config, "trace"] = ["trace", *flags, "-o", str(files[config, "trace"])]
    (folder / "seed.py").write_text(SEED_CODE)
    runs["code"] = ["code", str(folder / "seed.py")]
    return {**command_lines(runs, timeout=120), "files": files}


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.cell}-T{c.seq_len}-L{c.num_layers}")
def test_the_graph_counts_what_torch_recorded_and_says_so(config):
    expected = counted_by_torch(config)
    counts = run(config).graph.counts
    assert counts == count_nodes(run(config).graph)
    assert (counts.operations, counts.parameters, counts.inputs, counts.outputs) == \
        (expected["operations"], expected["parameters"], 1, 1)
    assert counts.nodes == expected["nodes"] == len(run(config).graph.nodes)
    assert str(counts.summary()) == summary_of(expected)


def test_summary_words_follow_the_numbers():
    one = NodeCounts(1, 1, 0, 1, 1)
    assert str(one.summary()) == "3 nodes: 1 operation, 1 parameter tensor and the output"
    assert str(NodeCounts(5, 0, 2, 1, 9).summary()) == "8 nodes: 5 operations, 2 inputs and the output"
    assert str(NodeCounts(5, 0, 2, 1, 9).besides_operations()) == "the 2 inputs and the output"
    assert str(NodeCounts(2_000, 6, 1, 1, 9).summary()).startswith("2,008 nodes: 2,000 operations, 6 ")


def playground(config: RunConfig, **params: str) -> AppTest:
    at = AppTest.from_file(PLAYGROUND, default_timeout=120)
    for key, value in {**config.to_params(), **params}.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.cell}-T{c.seq_len}-L{c.num_layers}")
def test_one_config_through_every_place_that_prints_a_count(config, command_line):
    expected = counted_by_torch(config)
    summary = summary_of(expected)
    result = run(config)

    # The Playground: metrics, their tooltips and the caption over the graph.
    at = playground(config, replay="true")
    assert not at.exception
    assert metric(at, "Graph nodes") == f"{expected['nodes']:,}"
    assert metric_help(at, "Graph nodes") == summary + "."
    assert metric(at, "Parameters") == f"{sum(p.numel() for p in build(config)[1].parameters()):,}"
    assert f"graph's {expected['parameters']} parameter tensors" in metric_help(at, "Parameters")
    assert any(c.value.startswith(summary + " · ") for c in at.caption)
    sent = graph_sent(at.get("bidi_component")[0])
    assert sent["counts"]["summary"] == summary and sent["counts"]["nodes"] == expected["nodes"]
    assert sent["caption"].startswith(summary)
    assert sent["view"] == "unrolled" and sent["counts"]["boxes"] == len(sent["nodes"]["id"]) \
        == expected["nodes"]  # what a learner counts on screen

    # The replay's status line: it replays the operations and says so.
    status = sent["trace"]["status"]
    assert status["forward_total"] == len(sent["trace"]["forward"]) == expected["operations"]
    assert status["backward_total"] == len(sent["trace"]["backward"]) == expected["operations"]
    ops = expected["operations"]
    assert status["forward"] == f"Record (forward): {{done}} of {ops} operations recorded"
    assert status["backward"] == f"Backward of output.sum(): {{done}} of {ops} operations run"
    assert status["forward_end"] == (f"with the {expected['parameters']} parameter tensors, the input "
                                     f"and the output: the graph's {expected['nodes']} nodes")
    assert status["backward_end"] == f"the {expected['parameters']} parameter tensors hold their .grad"

    # The Playground's panels: operations by type add up to the operations, the size chart's
    # mark for this run is the node count.
    ops_panel = playground(config, panel="Ops by type")
    figure = json.loads(ops_panel.get("plotly_chart")[0].proto.spec)
    assert plotly_values(figure["data"][0]["x"]).sum() == ops
    assert figure["layout"]["title"]["text"].startswith(f"The {ops} operations autograd recorded")
    assert figure["layout"]["xaxis"]["title"]["text"] == "operations"
    assert ops_panel.dataframe[0].value["count"].sum() == ops
    size = json.loads(playground(config, panel="Graph size against T").get("plotly_chart")[0].proto.spec)
    this_run = next(t for t in size["data"] if t["name"].startswith("this run"))
    assert list(plotly_values(this_run["y"])) == [expected["nodes"]]
    assert size["layout"]["yaxis"]["title"]["text"] == "graph nodes"

    # The node table: one row per box, every box one node in the unrolled view.
    picture = layout(result.graph, "unrolled", max_nodes=None)
    table = node_table(picture, drawing_of_run(config)[1])
    assert len(table) == expected["nodes"]
    assert (table["op"] == "parameter").sum() == expected["parameters"]
    assert table["order in forward"].notna().sum() == expected["operations"]

    # The command line: the file's own label and the note on standard error.
    done, as_json, replayed = (command_line[(config, what)] for what in ("dot", "json", "trace"))
    assert done.returncode == as_json.returncode == replayed.returncode == 0, \
        done.stderr + as_json.stderr + replayed.stderr
    assert summary in done.stderr and f"{len(result.graph.edges)} edges" in done.stderr
    assert f'label="{summary} · ' in command_line["files"][config, "dot"].read_text()
    assert f": {ops} operations in the order forward recorded them, {ops} in the order backward()" \
        in replayed.stderr
    stats = json.loads(as_json.stdout)["stats"]
    assert (stats["nodes"], stats["ops"], stats["parameters"], stats["counted"]) == \
        (expected["nodes"], expected["operations"], expected["parameters"], summary)


def test_the_lesson_answers_count_like_the_playground():
    seed = counted_by_torch(SEED)
    grad_fn, shape, gain = (step.reveal() for step in lesson.STEPS[:3])
    assert f"last of the {seed['operations']} operations" in grad_fn.detail
    assert f"recorded {summary_of(seed)}." in shape.detail
    longer = counted_by_torch(SEED.replace(seq_len=6))
    assert gain.value == f"{longer['nodes'] - seed['nodes']:+d}"
    assert f"one more block: {longer['operations'] - seed['operations']} operations" in gain.detail
    at = playground(SEED)
    assert metric(at, "Graph nodes") == str(seed["nodes"])  # the page the lesson's step links to


def test_the_seeds_graph_nodes_is_one_number_on_every_surface(command_line):
    """The Playground, Your code (the seed's own script, run in the sandbox), the notebook
    widget and both commands print the seed's "Graph nodes" alike: torch's grad_fns and
    AccumulateGrads, plus where the data enters (the script's ``input_data``) and the output."""
    seed = counted_by_torch(SEED)
    expected = f"{seed['nodes']:,}"
    assert metric(playground(SEED), "Graph nodes") == expected

    code = AppTest.from_file(str(ROOT / "pages" / "code.py"), default_timeout=120).run()
    assert not code.exception, [e.message for e in code.exception]
    assert metric(code, "Graph nodes") == expected
    assert metric_help(code, "Graph nodes") == summary_of(seed) + "."

    x, model = build(SEED)
    widget = json.loads(stockdemo.show(model, x).payload)
    assert widget["counts"]["nodes"] == seed["nodes"] and widget["counts"]["summary"] == summary_of(seed)

    graph, ran = command_line[SEED, "json"], command_line["code"]
    assert graph.returncode == 0, graph.stderr
    assert json.loads(graph.stdout)["stats"]["nodes"] == seed["nodes"]
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["nodes"] == seed["nodes"]


def test_the_other_pages_that_count_a_runs_nodes_count_the_same():
    seed = counted_by_torch(SEED)
    at = AppTest.from_file(str(ROOT / "pages" / "debugging.py"), default_timeout=120).run()
    assert not at.exception
    label = at.selectbox(key="node").label
    assert [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) nodes", label)] == [seed["nodes"]]


def test_the_labs_graph_nodes_counts_torchs_nodes_with_the_input_and_the_output():
    """The Lab's "Backward twice" counts its graph as every other page does (``NodeCounts``), not
    as the grad_fns a walk reaches, which leaves the input's and the output's boxes out."""
    config = BreakConfig()
    model = seeded_model(config.lab_cell, 10, config.seed)
    x, y = price_windows(config.lab_t, BREAK_BATCH)
    expected = counted(mse(model(x), y))  # the experiment's own run, redone here
    at = AppTest.from_file(str(ROOT / "pages" / "lab.py"), default_timeout=120)
    at.query_params["lab"] = "Backward twice"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert metric(at, "Graph nodes") == f"{expected['nodes']:,}"
    assert metric_help(at, "Graph nodes").startswith(summary_of(expected) + ".")


def test_a_rerun_that_only_selects_a_node_is_not_a_new_run(clear_caches):
    def change(at) -> str:  # said on the stage, beside the graph
        return graph_sent(at.get("bidi_component")[0])["stage"]["change"]

    at = playground(SEED)
    first = change(at)
    assert "First run of this session" in first and metric_deltas(at) == {}
    at.query_params["node"] = "L0.t0/Addmm0"  # what a click on a node does: the URL names it
    at.run()
    assert not at.exception
    assert change(at) == first and metric_deltas(at) == {}
    at.session_state["seq_len"] = 6  # as a move of T does, by slider or on the stage
    at.run()
    moved = change(at)
    assert "+1 time step" in moved and metric_deltas(at) == {"Graph nodes": "↑ +4"}
    at.query_params["node"] = "L0.t5/Tanh0"
    at.run()
    info = change(at)
    assert info == moved and "Same settings" not in info
    assert metric_deltas(at) == {"Graph nodes": "↑ +4"}  # not "± 0"
    ids = graph_sent(at.get("bidi_component")[0])["nodes"]["id"]
    marked = {ids[i] for i in graph_sent(at.get("bidi_component")[0])["new"]}
    assert marked == {i for i in ids if i.startswith("L0.t5/")}  # still marked after the click
