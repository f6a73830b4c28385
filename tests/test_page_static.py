"""The Static vs dynamic page under AppTest: defaults, the capture button, T changes."""

from streamlit.testing.v1 import AppTest

from stockdemo import static
from stockdemo.config import RunConfig
from stockdemo.view_payload import node_text
from tests.helpers import graph_sent, metric, metrics

PAGE = "../pages/static_vs_dynamic.py"  # resolved against this file
TIMEOUT = 180


def charts(at: AppTest) -> list[str]:
    """The static FX graphs, as DOT."""
    return [c.proto.spec for c in at.get("graphviz_chart")]


def views(at: AppTest) -> list[dict]:
    """The autograd graphs, as sent to the graph view (stockdemo/ui/graph_view.py)."""
    return [graph_sent(c) for c in at.get("bidi_component")]


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
    table = at.dataframe[0].value
    assert list(table["T"]) == [5, 8, 5]
    assert table["what dynamo did"].iloc[-1] == "reused graph 1"


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
