"""The Debugging page under AppTest: every figure comes from the live run."""

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from harness.helpers import plotly_values as values
from stockdemo.config import RunConfig
from stockdemo.live import inspection

PAGE = "../pages/debugging.py"


def figure(at: AppTest, title_part: str) -> dict:
    for chart in at.get("plotly_chart"):
        fig = json.loads(chart.proto.spec)
        if title_part in fig["layout"]["title"]["text"]:
            return fig
    raise AssertionError(f"no plotly chart titled with {title_part!r}")


def fresh(**params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


@pytest.fixture(autouse=True)
def cold(clear_caches):
    yield


def test_defaults_show_heatmap_gradients_prints_and_inspector_of_the_seed_run():
    at = fresh()
    assert not at.exception
    expected = inspection.inspect_run(RunConfig())

    heat = figure(at, "Hidden state")["data"]
    assert len(heat) == 1
    assert list(values(heat[0]["x"])) == list(range(5))
    np.testing.assert_allclose(values(heat[0]["z"]), expected.hidden[0].T, rtol=1e-6)

    grads = figure(at, "Gradient")
    assert grads["layout"]["yaxis"]["type"] == "log"
    np.testing.assert_allclose(values(grads["data"][0]["y"]), expected.grad_norms[0], rtol=1e-6)

    printed = at.code[[c.language for c in at.code].index("text")].value
    assert printed.startswith("layer 0, step t=0")

    assert at.selectbox(key="node").value == "L0.t4/Tanh0"
    saved = at.dataframe[0].value
    assert list(saved["saved"]) == ["_saved_result"]
    assert saved["shape"][0] == "(10, 10)"


def test_longer_sequence_widens_the_heatmap_and_adds_gradient_points():
    at = fresh()
    at.slider(key="seq_len").set_value(50).run()
    assert not at.exception
    heat = figure(at, "Hidden state")["data"][0]
    assert values(heat["z"]).shape == (10, 50)
    assert list(values(heat["x"]))[-1] == 49
    y = values(figure(at, "Gradient")["data"][0]["y"])
    assert len(y) == 50
    assert y[0] / y[-1] < 1e-6  # tanh at 100 %: the first step's gradient has vanished
    assert any("vanishing" in m.value for m in at.markdown)
    nodes = at.selectbox(key="node")
    assert nodes.value == "L0.t4/Tanh0"  # the choice made at T=5 still exists: kept
    assert "L0.t49/Tanh0  ·  Tanh" in nodes.options and len(nodes.options) > 200


def test_relu_and_large_weights_make_the_gradient_explode():
    at = fresh(seq_len="50", nonlinearity="relu", weight_scale="300")
    assert not at.exception
    y = values(figure(at, "Gradient")["data"][0]["y"])
    assert y[0] / y[-1] > 1e3
    assert any("exploding" in m.value for m in at.markdown)


def test_print_step_beyond_a_shorter_sequence_is_clamped():
    at = fresh(seq_len="20", print_step="15")
    assert "step t=15" in at.code[[c.language for c in at.code].index("text")].value
    at.slider(key="seq_len").set_value(8).run()
    assert not at.exception
    assert at.slider(key="print_step").value == 7
    assert "step t=7" in at.code[[c.language for c in at.code].index("text")].value


def test_two_layers_draw_two_heatmaps_and_two_gradient_lines():
    at = fresh(num_layers="2", cell="gru_loop")
    assert not at.exception
    assert len(figure(at, "Hidden state")["data"]) == 2
    assert [t["name"] for t in figure(at, "Gradient")["data"]] == ["layer 0", "layer 1"]


def test_choosing_a_parameter_node_shows_its_tensor():
    at = fresh()
    at.selectbox(key="node").select("param/rnn.weight_hh_l0").run()
    assert not at.exception
    saved = at.dataframe[0].value
    assert saved["shape"][0] == "(10, 10)"
    assert {"min", "max", "mean", "std"} <= set(saved.columns)


def test_a_single_step_run_has_no_print_slider_and_no_error():
    at = fresh(seq_len="1")
    assert not at.exception
    assert not [s for s in at.slider if s.key == "print_step"]
    assert "step t=0" in at.code[[c.language for c in at.code].index("text")].value


def test_fused_lstm_opens_the_inspector_on_its_single_layer_node():
    at = fresh(cell="lstm")
    assert not at.exception
    assert at.selectbox(key="node").value == "L0.fused/MkldnnRnnLayer0"
    saved = at.dataframe[0].value
    assert "_saved_weight0" in set(saved["saved"])


def test_gradients_that_underflow_to_zero_are_said_not_hidden():
    at = fresh(seq_len="200")
    assert not at.exception
    y = values(figure(at, "Gradient")["data"][0]["y"])
    zeros = int((y == 0).sum())
    assert zeros > 0  # tanh at 100 % over 200 steps: below float32's range
    assert any(f"{zeros} points underflowed" in c.value for c in at.caption)
    assert any("vanishes completely" in m.value for m in at.markdown)


@pytest.mark.parametrize("link", ["L0.t2/Tanh0", "L0.t2/Tanh0  ·  Tanh", " L0.t2/Tanh0 "])
def test_a_link_naming_a_node_by_id_or_label_opens_the_inspector_on_it(link):
    at = fresh(node=link)
    assert not at.exception and not at.warning
    assert at.selectbox(key="node").value == "L0.t2/Tanh0"
    assert any(m.value.startswith("**L0.t2/Tanh0**") for m in at.markdown)


@pytest.mark.parametrize("link", ["L0.t99/Tanh0", "nonsense", "x" * 500])
def test_a_link_naming_no_node_of_this_run_says_so_and_shows_the_default(link):
    at = fresh(node=link)
    assert not at.exception
    assert at.selectbox(key="node").value == "L0.t4/Tanh0"
    # A value longer than any node's id is refused as the URL's values are; a short one is looked up.
    words = "longer than 120 characters" if len(link) > 120 else "names node"
    message = [w.value for w in at.warning if words in w.value]
    assert len(message) == 1 and len(message[0]) < 300
    at.slider(key="seq_len").set_value(6).run()  # the message stays, the picker follows the run
    assert [w.value for w in at.warning if words in w.value] == message
    assert at.selectbox(key="node").value == "L0.t4/Tanh0"
