"""The Lab page through AppTest: every experiment runs live, its controls and tab live in the URL."""

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT, graph_sent, metric, metrics
from harness.links import assert_controls_in_bounds, nasty
from stockdemo import lab
from stockdemo.lab.figures import report
from stockdemo.layout.steps import layout

PAGE = str(ROOT / "pages" / "lab.py")
BROKEN = ["Backward twice", "Carried hidden state", "In-place change", "NaN", "no_grad"]


def open_lab(experiment: str | None = None, **params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    if experiment:
        at.query_params["lab"] = experiment
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def graph_drawn(at: AppTest) -> list[dict]:
    """What the page's graph views were sent: drawn ids and positions (one view at a time)."""
    return [{k: graph_sent(c)["nodes"][k] for k in ("id", "x", "y")} for c in at.get("bidi_component")
            if c.proto.component_name.endswith("graph_view")]


def laid_out(graph) -> dict:
    """The same, laid out here from a run of our own."""
    picture = layout(graph, "auto", max_nodes=None)
    return {"id": [p.id for p in picture.nodes], "x": [round(p.x, 1) for p in picture.nodes],
            "y": [round(p.y, 1) for p in picture.nodes]}


@pytest.mark.parametrize("experiment", list(lab.EXPERIMENTS))
def test_every_experiment_runs_and_draws_its_own_run(experiment):
    at = open_lab(experiment)
    assert not at.exception, [e.message for e in at.exception]
    assert "Run time" in metrics(at)
    config_class, run = lab.EXPERIMENTS[experiment]
    # the controls on screen are exactly this experiment's knobs
    shown = {w.key for w in [*at.slider, *at.selectbox, *at.number_input]} - {"present_toggle",
                                                                              "language_picker"}
    assert shown == {k.name for k in config_class.shown_knobs({})}
    expected = report(run(config_class()))
    assert len(at.get("plotly_chart")) == len(expected.figures)
    # the run's first graph in the interactive view; the picker swaps in each of the others
    assert graph_drawn(at) == [laid_out(g.graph) for g in expected.graphs[:1]]
    for shown in expected.graphs[1:]:
        at.segmented_control(key="lab_graph").set_value(shown.label).run()
        assert graph_drawn(at) == [laid_out(shown.graph)], shown.label
        assert f"**{shown.caption}**" in [m.value for m in at.markdown]


@pytest.mark.parametrize("experiment", BROKEN)
def test_broken_experiments_show_torchs_message_word_for_word(experiment):
    at = open_lab(experiment)
    config_class, run = lab.EXPERIMENTS[experiment]
    result = run(config_class())
    shown = [c.value for c in at.code if c.language in (None, "", "plaintext")]
    assert result.error and result.error in shown
    python = "\n".join(c.value for c in at.code if c.language == "python")
    assert result.mistake in python and result.fix in python


def test_the_length_controls_appear_when_you_set_the_lengths():
    at = open_lab()
    assert not [s for s in at.slider if s.key in ("short_len", "long_len")]
    at.selectbox(key="cut").select("set").run()
    assert not at.exception
    at.slider(key="short_len").set_value(2).run()
    result = lab.different_lengths(lab.LengthsConfig(cut="set", short_len=2))
    assert metric(at, "Their sizes") == f"{min(g.stats['nodes'] for g in result.window_graphs)}–" \
        f"{max(g.stats['nodes'] for g in result.window_graphs)} nodes"


def test_fewer_weeks_give_fewer_graphs_and_the_gap_follows_the_run():
    at = open_lab()
    assert metric(at, "Graphs, one by one") == "8"
    at.slider(key="weeks").set_value(3).run()
    assert not at.exception
    assert metric(at, "Graphs, one by one") == "3"
    result = lab.different_lengths(lab.LengthsConfig(weeks=3))
    assert metric(at, "Padded vs loop") == f"≤ {result.padded_gaps.max():.3g}"


def test_more_batches_grow_the_carried_graph_on_screen():
    at = open_lab("Carried hidden state")
    before = int(metric(at, "Nodes at batch 6, carried"))
    at.slider(key="batches").set_value(8).run()
    assert not at.exception
    after = int(metric(at, "Nodes at batch 8, carried"))
    per_batch = lab.carried_state(lab.DetachConfig())
    assert after - before == 2 * (per_batch.retained[1].nodes - per_batch.retained[0].nodes)
    assert metric(at, "Nodes at batch 8, detached") == str(per_batch.detached[0].nodes)


def test_a_link_sets_the_tab_and_the_controls_and_clamps_what_is_out_of_range():
    at = open_lab("NaN", lab_t="8", lab_cell="gru")
    assert not at.exception
    assert at.slider(key="lab_t").value == 8 and at.selectbox(key="lab_cell").value == "gru"
    result = lab.nan(lab.BreakConfig(lab_cell="gru", lab_t=8))
    assert metric(at, "NaN gradient entries") == str(sum(result.nan_grads.values()))
    at = open_lab("NaN", lab_t="999")
    assert at.slider(key="lab_t").value == 30
    assert any("outside 1–30" in w.value for w in at.warning)


def test_the_cost_chart_holds_the_measured_bytes():
    at = open_lab("What the graph costs", max_t="20")
    assert not at.exception
    result = lab.graph_cost(lab.CostConfig(max_t=20))
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    rnn = next(trace for trace in chart["data"] if trace["name"] == "nn.RNN")
    assert rnn["x"] == [r.seq_len for r in result.rows if r.cell == "rnn"]
    assert rnn["y"] == [r.saved_bytes / 1024 for r in result.rows if r.cell == "rnn"]


def test_the_window_mix_reads_as_counts_and_the_padding_per_window():
    at = open_lab()
    result = lab.different_lengths(lab.LengthsConfig())
    counts = Counter(result.lengths)
    text = " ".join(m.value for m in at.markdown)
    for days, windows in counts.items():  # e.g. "3 windows of 4 days", never "3 of 4 days"
        assert f"{windows} window{'s' if windows > 1 else ''} of {days} days" in text
    longest = max(result.lengths)
    padding = {longest - n for n in result.lengths if n < longest}
    if len(padding) == 1:  # every shorter window is padded the same: said per window
        (each,) = padding
        assert f"{each} made-up day{'s' if each > 1 else ''} of 0 % return each" in text


def test_coinciding_memory_lines_are_drawn_apart_and_named_under_the_chart():
    at = open_lab("What the graph costs")
    result = lab.graph_cost(lab.CostConfig())
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    looks = {(t["line"]["dash"], t["marker"]["symbol"]) for t in chart["data"]}
    assert len(looks) == len(chart["data"]) == len(lab.COST_CELLS)  # each line its own dash and marker
    saved = {c: [r.saved_bytes for r in result.rows if r.cell == c] for c in lab.COST_CELLS}
    assert saved["rnn"] == saved["rnn_loop"]  # the measurement that makes two lines one
    caption = next(c.value for c in at.caption if c.value.startswith("Lines on top of one another"))
    assert "nn.RNN and for-loop over nn.RNNCell (the same at every T)" in caption


keys = st.sampled_from(sorted({k.name for k in lab.KNOBS} | {"lab", "unknown"}))
tab_or_nasty = st.one_of(nasty, st.sampled_from(list(lab.EXPERIMENTS)))


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(params=st.dictionaries(keys, st.one_of(tab_or_nasty, st.lists(nasty, min_size=2, max_size=3)),
                              max_size=5))
def test_any_link_to_the_lab_runs_without_error_and_keeps_controls_in_bounds(params):
    at = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert_controls_in_bounds(at)
    assert "Run time" in metrics(at)  # some experiment always runs


def test_a_link_opens_the_graph_it_names_and_a_strange_name_opens_the_first():
    detached = report(lab.carried_state(lab.DetachConfig())).graphs[1]
    at = open_lab("Carried hidden state", lab_graph="Detached")
    assert detached.label == "Detached"
    assert graph_drawn(at) == [laid_out(detached.graph)]
    at = open_lab("Carried hidden state", lab_graph="<script>")
    assert not at.exception
    assert graph_drawn(at) == [laid_out(report(lab.carried_state(lab.DetachConfig())).graphs[0].graph)]


def test_a_graph_name_left_from_another_experiment_leaves_the_link():
    at = open_lab("Carried hidden state", lab_graph="Out of place")  # In-place change's second graph
    assert not at.exception
    assert at.segmented_control(key="lab_graph").value == "Carried"
    assert "lab_graph" not in at.query_params
