"""Playground page through AppTest: controls change the run, the graph and the words."""

import json
import subprocess
import sys

import pytest
import torch
from streamlit.testing.v1 import AppTest

from harness.helpers import (
    ROOT,
    graph_sent,
    metric,
    metric_deltas,
    metrics,
    move_stage,
    send_from_view,
    stage_values,
)
from stockdemo import RunConfig, run
from stockdemo.config import KNOBS
from stockdemo.ui import keys

PAGE = str(ROOT / "pages" / "playground.py")


def graph(at) -> dict:
    """What the graph view was sent: the laid-out picture (stockdemo/ui/graph_view.py)."""
    return graph_sent(at.get("bidi_component")[0])


def fresh() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=120)


def test_moving_sequence_length_changes_node_count_and_graph(clear_caches):
    at = fresh().run()
    assert not at.exception
    nodes_before, frames_before = metric(at, "Graph nodes"), graph(at)["frames"]["label"]
    assert nodes_before == "38" and "t = 4" in frames_before and "t = 5" not in frames_before
    assert metric_deltas(at) == {}  # the session's first run: nothing to compare with
    move_stage(at, seq_len=6)
    assert not at.exception
    assert metric(at, "Graph nodes") == "42"
    assert metric_deltas(at) == {"Graph nodes": "↑ +4"}  # against this session's previous run
    assert "t = 5" in graph(at)["frames"]["label"] and len(graph(at)["nodes"]["id"]) == 42
    new = {graph(at)["nodes"]["id"][i] for i in graph(at)["new"]}
    assert new and all(i.startswith("L0.t5/") for i in new)  # marked on the graph itself
    change = graph(at)["stage"]["change"]  # said on the stage, beside the graph
    assert "+1 time step" in change and "+4 nodes" in change and "Tanh" in change


def test_choosing_lstm_shows_the_fused_kernel_explanation():
    at = fresh().run()
    assert not any("fused" in w.value for w in at.warning)
    move_stage(at, cell="lstm")
    assert not at.exception
    assert any("MkldnnRnnLayerBackward0" in w.value and "fused" in w.value for w in at.warning)


def test_metrics_come_from_the_live_run():
    at = fresh()
    at.query_params["seq_len"] = "9"
    at.query_params["cell"] = "gru"
    at.run()
    result = run(RunConfig(seq_len=9, cell="gru"))
    assert metric(at, "Graph nodes") == f"{result.graph.stats['nodes']:,}"
    assert metric(at, "Parameters") == f"{result.parameter_count:,}"
    assert metric(at, "Output shape") == "(10, 1)"


def open_panel(panel: str) -> AppTest:
    at = fresh()
    at.query_params["panel"] = panel
    return at.run()


def test_only_the_open_panel_builds_its_chart():
    charts = fresh().run().get("plotly_chart")
    assert len(charts) == 1
    assert "predictions" in json.loads(charts[0].proto.spec)["layout"]["title"]["text"]


def test_ops_by_type_and_size_sweep_are_drawn_from_the_run():
    ops = json.loads(open_panel("Ops by type").get("plotly_chart")[0].proto.spec)
    title = ops["layout"]["title"]  # "by op" in its subtitle: the whole title ran off a phone
    assert "by op" in title["text"] + title["subtitle"]["text"] and "Tanh" in ops["data"][0]["y"]
    at = open_panel("Graph size against T")
    size = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "against T" in size["layout"]["title"]["text"]
    assert any("each extra time step adds 4 nodes" in c.value for c in at.caption)


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm", "gru_loop"])
def test_no_exception_at_maximal_settings(cell):
    at = fresh()
    for name in ("seq_len", "hidden_size", "num_layers", "batch_size", "input_size"):
        at.query_params[name] = str(KNOBS[name].high)
    at.query_params["cell"] = cell
    at.run()
    assert not at.exception
    assert metric(at, "Output shape") == "(64, 1)"
    assert graph(at)["view"] == "rolled" or cell == "lstm"


def test_tampered_url_values_are_clamped_with_a_visible_message():
    at = fresh()
    at.query_params["seq_len"] = "999"
    at.query_params["cell"] = "<script>"
    at.run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "outside 1–200" in warnings and "not one of" in warnings
    assert stage_values(at)["seq_len"] == 200 and stage_values(at)["cell"] == "rnn"
    assert at.query_params["seq_len"] == "200" and "cell" not in at.query_params


def test_the_code_panel_reproduces_the_page_predictions_in_a_fresh_interpreter(tmp_path):
    at = fresh()
    at.query_params["seq_len"] = "7"
    at.query_params["cell"] = "lstm_loop"
    at.query_params["seed"] = "3"
    at.run()
    at.query_params["panel"] = "Share this run"
    at.run()
    code = next(c.value for c in at.code if c.value.startswith("import torch"))
    script = tmp_path / "reproduce.py"
    script.write_text(code + "\ntorch.save(predictions.detach(), 'predictions.pt')\n")
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, check=True, capture_output=True)
    shown = run(RunConfig(seq_len=7, cell="lstm_loop", seed=3)).predictions
    assert torch.equal(torch.load(tmp_path / "predictions.pt"), shown)


def test_presets_set_the_controls_in_one_click():
    at = fresh().run()
    assert not [b for b in at.button if b.key.startswith("preset_")]  # drawn only while open
    at.session_state["presets"] = True  # the expander opened
    at.run()
    at.button(key="preset_lstm").click().run()
    assert not at.exception
    assert stage_values(at)["cell"] == "lstm" and stage_values(at)["seq_len"] == 40
    assert any("fused" in w.value for w in at.warning)
    at.button(key="preset_seed").click().run()
    assert stage_values(at)["cell"] == "rnn" and stage_values(at)["seq_len"] == 5
    assert metric(at, "Graph nodes") == "38"


def test_share_link_carries_every_non_default_setting():
    at = fresh()
    at.query_params["seq_len"] = "12"
    at.query_params["seed"] = "7"
    at.query_params["panel"] = "Share this run"  # the link is under this tab
    at.run()
    link = next(c.value for c in at.code if "/playground?" in c.value)
    assert link.endswith("/playground?seq_len=12&seed=7")
    again, _ = RunConfig.from_params(dict(p.split("=") for p in link.split("?")[1].split("&")))
    assert again == RunConfig(seq_len=12, seed=7)


def test_presenter_mode_from_the_link_drops_the_long_explanations():
    at = fresh()
    at.query_params["present"] = "1"
    at.query_params["panel"] = "Share this run"
    at.run()
    assert not at.exception and at.session_state["present"] is True
    assert not any("Drag **Sequence length T**" in m.value for m in at.markdown)
    link = next(c.value for c in at.code if "/playground?" in c.value)
    assert "present=1" in link


def test_a_metric_row_escapes_what_it_shows_and_signs_its_changes():
    def page():
        from stockdemo import ui

        ui.metric_row([
            ui.Metric("<b>label</b>", "<script>alert(1)</script>", help='say "hi" & <go>'),
            ui.Metric("fewer", "3", delta=-2),
            ui.Metric("same", "4", delta=0),
            ui.Metric("more", "1,204", delta=1200),
        ])

    at = AppTest.from_function(page).run()
    assert not at.exception
    (row,) = [m.value for m in at.markdown if "sd-metrics" in m.value]
    assert "<script>" not in row and "<b>" not in row and '"hi"' not in row
    assert metrics(at) == {"<b>label</b>": "<script>alert(1)</script>", "fewer": "3", "same": "4",
                           "more": "1,204"}
    assert metric_deltas(at) == {"fewer": "↓ −2", "same": "± 0", "more": "↑ +1,200"}


def test_more_settings_are_drawn_only_when_open_and_kept_in_the_link_either_way():
    at = fresh()
    at.query_params["seed"] = "7"
    at.query_params["view"] = "rolled"
    at.query_params["panel"] = "Share this run"
    at.run()
    assert not at.exception
    # Closed: no widgets for them, but the run uses the link's values and the link keeps them.
    assert not at.number_input and not at.slider
    assert not [s for s in at.selectbox if s.key not in keys.FRAME_WIDGETS]
    assert "seed=7" in next(c.value for c in at.code if "/playground?" in c.value)
    assert graph(at)["view"] == "rolled"
    assert at.query_params["seed"] == "7" and at.query_params["view"].startswith("rolled")
    # Open: the widgets hold the same values; a change goes to the run and to the address bar.
    at.session_state["playground_more"] = True
    at.run()
    assert at.number_input(key="seed").value == 7 and at.selectbox(key="view").value == "rolled"
    at.number_input(key="seed").set_value(9).run()
    assert at.query_params["seed"] == "9"
    # Closed again: the last value stays, in the run, the URL and the widget when reopened.
    at.session_state["playground_more"] = False
    at.run()
    assert not at.exception and not at.number_input
    assert at.query_params["seed"] == "9"
    assert "seed=9" in next(c.value for c in at.code if "/playground?" in c.value)
    move_stage(at, seq_len=6)
    assert "seed=9" in next(c.value for c in at.code if "/playground?" in c.value)
    at.session_state["playground_more"] = True
    at.run()
    assert at.number_input(key="seed").value == 9
    # Back to the default: the setting leaves the URL, as a bound widget's does.
    at.number_input(key="seed").set_value(0).run()
    assert "seed" not in at.query_params


def test_the_stage_takes_the_browsers_values_only_through_the_knobs_parsers():
    at = fresh().run()
    send_from_view(at, knobs={"seq_len": "1e9", "hidden_size": -4, "num_layers": "two",
                              "cell": "<img src=x onerror=alert(1)>", "req": 3})
    assert not at.exception
    assert stage_values(at) == {"seq_len": 200, "hidden_size": 1, "num_layers": 1, "cell": "rnn"}
    assert at.query_params["seq_len"] == "200" and at.query_params["hidden_size"] == "1"
    assert graph(at)["stage"]["req"] == 3  # the request this payload answers


def test_each_value_a_drag_sends_is_a_run_that_answers_its_request():
    # (AppTest runs whole pages: that only the stage reruns while dragging is a browser test.)
    at = fresh().run()
    for req, t in enumerate((6, 7, 8), start=1):  # values crossed while the pointer is down
        send_from_view(at, knobs={**stage_values(at), "seq_len": t, "req": req})
        assert graph(at)["stage"]["req"] == req and metric(at, "Graph nodes") == f"{18 + 4 * t}"
        assert len(graph(at)["nodes"]["id"]) == len(run(RunConfig(seq_len=t)).graph.nodes)
    send_from_view(at, trigger={"settled": 3})
    assert not at.exception and at.query_params["seq_len"] == "8"
    assert metric_deltas(at) == {"Graph nodes": "↑ +4"}  # the whole-page run keeps the last change


def test_the_views_own_replay_button_sends_the_trace_and_goes_in_the_link():
    at = fresh().run()
    assert graph(at)["trace"] is None and graph(at)["stage"]["replay"] is False
    send_from_view(at, replay=True)
    assert graph(at)["trace"] is not None and graph(at)["stage"]["replay"] is True
    assert at.query_params["replay"] == "true"
    send_from_view(at, replay=False)
    assert graph(at)["trace"] is None and "replay" not in at.query_params
    again = fresh()
    again.query_params["replay"] = "true"
    assert graph(again.run())["trace"] is not None


def test_a_link_followed_later_in_the_session_sets_the_stage():
    # A lesson step's link to the Playground, opened after the learner has moved T there.
    at = fresh()
    at.query_params["seq_len"] = "7"
    at.run()
    move_stage(at, seq_len=9)
    assert stage_values(at)["seq_len"] == 9 and at.query_params["seq_len"] == "9"
    at.query_params["seq_len"] = "6"  # the link the learner follows
    at.query_params["cell"] = "nn.GRU"
    at.run()
    assert not at.exception
    assert stage_values(at)["seq_len"] == 6 and stage_values(at)["cell"] == "gru"
    assert metric(at, "Graph nodes") == f"{run(RunConfig(seq_len=6, cell='gru')).graph.counts.nodes:,}"
    at.query_params["seq_len"] = "999"  # a tampered one is clamped, and said
    at.run()
    assert stage_values(at)["seq_len"] == 200 and any("outside 1–200" in w.value for w in at.warning)
    move_stage(at, seq_len=8)  # and the learner's own moves still win over the old link
    at.run()
    assert stage_values(at)["seq_len"] == 8 and at.query_params["seq_len"] == "8"


def test_coming_back_by_the_menu_keeps_the_learners_stage():
    # The menu's link to the Playground names no knob: the learner's T and cell stay, and
    # the address says them again. A link that names one knob sets the others to default.
    at = fresh().run()
    move_stage(at, seq_len=9, cell="gru")
    assert at.query_params["seq_len"] == "9"
    at.query_params.clear()  # back from another page through the menu
    at.run()
    assert not at.exception
    assert stage_values(at)["seq_len"] == 9 and stage_values(at)["cell"] == "gru"
    assert at.query_params["seq_len"] == "9" and at.query_params["cell"] == "nn.GRU"
    at.query_params.clear()
    at.query_params["seq_len"] = "6"  # a lesson's "Open the Playground at T = 6"
    at.run()
    assert stage_values(at)["seq_len"] == 6 and stage_values(at)["cell"] == "rnn"


def test_a_comparison_link_followed_later_in_the_session_opens_that_comparison():
    at = fresh().run()
    send_from_view(at, trigger={"pin": "pin"})
    assert graph(at)["compare"]["a_label"].startswith("T 5")
    at.query_params["compare"] = "seq_len.9~cell.gru"  # a link the learner follows
    at.run()
    assert not at.exception and graph(at)["compare"]["a_label"].startswith("T 9")
    assert "nn.GRU" in graph(at)["compare"]["a_label"]
    send_from_view(at, trigger={"pin": "unpin"})
    assert graph(at)["compare"] is None and "compare" not in at.query_params
    at.run()  # and the link it left does not pin it again
    assert graph(at)["compare"] is None
