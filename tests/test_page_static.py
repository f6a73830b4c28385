"""The Static vs dynamic page under AppTest: defaults, the capture button, T changes."""

import torch
from streamlit.testing.v1 import AppTest

from harness.helpers import graph_sent, metric, metrics
from stockdemo import static_graphs as static
from stockdemo.config import RunConfig
from stockdemo.render.payload import node_text

PAGE = "../pages/static_vs_dynamic.py"  # resolved against this file
TIMEOUT = 180


def charts(at: AppTest) -> list[str]:
    """The static FX graphs, as DOT."""
    return [c.proto.spec for c in at.get("graphviz_chart")]


def steps_table(at: AppTest):
    """The table of torch.compile's calls: what dynamo did at each T."""
    return next(d.value for d in at.dataframe if "what dynamo did" in d.value.columns)


def views(at: AppTest) -> list[dict]:
    """The autograd graphs, as sent to the graph view (stockdemo/ui/graph_view.py)."""
    return [graph_sent(c) for c in at.get("bidi_component") if c.proto.component_name.endswith("graph_view")]


def test_defaults_draw_eager_graphs_and_wait_for_the_button(clear_caches):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert at.slider(key="seq_len").value == 5
    assert at.button(key="static_capture")
    # This run's autograd graph and the early-stop model's two: no capture has run yet.
    assert len(views(at)) == 3 and not charts(at)
    assert "Recompiles" not in metrics(at)
    calm, volatile = static.early_stop_eager(RunConfig())
    text = " ".join(m.value for m in at.markdown)
    assert f"ran **{calm.steps} of 5** steps" in text
    assert f"ran **{volatile.steps} of 5** steps" in text


def test_capture_then_changing_seq_len_climbs_the_recompile_count():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.button(key="static_capture").click().run()
    assert not at.exception
    assert metric(at, "Recompiles") == "0"
    assert len(views(at)) == 3 and len(charts(at)) == 1  # eager, static FX, two early-stop graphs
    assert "torch.rnn_tanh" in charts(at)[0]

    at.slider(key="seq_len").set_value(8).run()
    assert not at.exception
    expected = static.compile_capture(RunConfig(), (5, 8))
    assert metric(at, "Recompiles") == str(expected.recompiles)
    assert metric(at, "Graphs captured") == str(len(expected.graphs))
    assert "(10, 8, 3)" in charts(at)[0]  # the static graph shown is the one for T=8

    at.slider(key="seq_len").set_value(5).run()
    assert metric(at, "Recompiles") == str(expected.recompiles)  # T=5 was seen: no new graph
    table = steps_table(at)
    assert list(table["T"]) == [5, 8, 5]
    assert table["what dynamo did"].iloc[-1] == "reused graph 1"


def test_six_new_lengths_climb_the_count_and_an_old_one_does_not_lower_it():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.button(key="static_capture").click().run()  # T = 5: the first graph
    climbed = []
    for seq_len in (6, 7, 8, 9, 10, 11):  # six new lengths
        at.slider(key="seq_len").set_value(seq_len).run()
        assert not at.exception
        climbed.append(int(metric(at, "Recompiles")))
    expected = static.compile_capture(RunConfig(), (5, 6, 7, 8, 9, 10, 11))
    assert climbed == sorted(climbed) and climbed[-1] == expected.recompiles >= 5
    assert metric(at, "Lengths since Capture") == "7"
    at.slider(key="seq_len").set_value(8).run()  # back to a length already captured
    assert int(metric(at, "Recompiles")) == climbed[-1]
    table = steps_table(at)
    assert list(table["T"]) == [5, 6, 7, 8, 9, 10, 11, 8]
    assert table["what dynamo did"].iloc[-1] == "reused graph 4"
    assert "(10, 8, 3)" in charts(at)[0]  # the FX graph shown is the one T = 8 ran


def test_past_the_limit_the_page_shows_torchs_warning_and_the_eager_run(monkeypatch):
    # Dynamo's config.patch is per thread, and AppTest runs the page in a thread of its own:
    # the default itself is lowered, for every thread, for this test only.
    monkeypatch.setattr(torch._dynamo.config._config["recompile_limit"], "default", 2)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.button(key="static_capture").click().run()
    for seq_len in (6, 7):
        at.slider(key="seq_len").set_value(seq_len).run()
    assert not at.exception
    assert metric(at, "Recompiles") == "1" and metric(at, "Ran eagerly") == "1"
    assert any("hit config.recompile_limit (2)" in c.value for c in at.code)
    assert any("No graph for T = 7" in w.value for w in at.warning)
    assert not charts(at)  # no FX graph drawn for a call that ran eagerly


def test_another_cell_is_another_model_and_says_its_count_starts_again():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.button(key="static_capture").click().run()
    at.slider(key="seq_len").set_value(6).run()
    at.selectbox(key="cell").select("gru").run()
    assert not at.exception
    assert metric(at, "Recompiles") == "0" and metric(at, "Lengths since Capture") == "1"
    assert any("A new cell is a new model" in c.value and "2 lengths" in c.value for c in at.caption)


def test_capture_again_starts_a_fresh_count():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.button(key="static_capture").click().run()
    at.slider(key="seq_len").set_value(6).run()
    assert metric(at, "Recompiles") == "1"
    at.button(key="static_capture").click().run()
    assert metric(at, "Recompiles") == "0" and metric(at, "Lengths since Capture") == "1"


def test_export_outcomes_on_the_page_are_the_live_ones():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.button(key="static_capture").click().run()
    shown = " ".join(e.value for e in (*at.error, *at.success))
    config = RunConfig()
    for outcome in (static.export_dynamic_seq_len(config), static.export_early_stop(config)):
        if outcome.ok:
            assert "**Exported**" in shown
        else:
            assert f"`{outcome.error_name}`" in shown
            assert any(outcome.message == c.value for c in at.code)


def test_url_sets_the_sequence_length():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["seq_len"] = "7"
    at.run()
    assert not at.exception
    assert at.slider(key="seq_len").value == 7
    assert "input x\n10×7×3" in node_text(views(at)[0], "label")  # the eager graph's input node
