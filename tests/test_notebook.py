"""stockdemo.show and stockdemo.compare (stockdemo/notebook), in this process: the widget's state
is the graph torch recorded, and what it does to the learner's model is nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
import torch
from torch import nn

import stockdemo
from harness.autograd import ops_by_type
from harness.helpers import ROOT
from stockdemo import RunConfig
from stockdemo.graph.diff import graph_diff
from stockdemo.layout.steps import layout
from stockdemo.live import run as live
from stockdemo.render.payload import node_text


class Loop(nn.Module):
    """An RNN cell in a Python for loop. x: (batch, T, 3) -> (batch, 1)"""

    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 6)
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], 6)
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)  # the step
        return self.fc(h)


class UntilNorm(nn.Module):
    """A data-dependent while: as many steps as the state needs to reach a norm. x: (batch, 3)"""

    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 6)
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], 6)
        steps = 0
        while h.norm() < 2.0 and steps < 40:
            h = h + 0.2 * (self.cell(x, h) - h)
            steps += 1
        return self.fc(h)


def payload_of(widget) -> dict:
    return json.loads(widget.payload)


def drawn_ops(payload: dict) -> Counter:
    """Op nodes by autograd's type, as the payload draws them (every box one node: unrolled)."""
    kinds = [payload["kinds"][k] for k in payload["nodes"]["kind"]]
    return Counter(op for op, kind in zip(node_text(payload, "op"), kinds, strict=True) if kind == "op")


def autograd_ops(output: torch.Tensor) -> Counter:
    ops = Counter(ops_by_type(output))
    del ops["AccumulateGrad"]
    return ops


def loop_run(steps: int, seed: int = 0) -> tuple[Loop, torch.Tensor]:
    torch.manual_seed(seed)
    return Loop(), torch.randn(4, steps, 3)


def test_import_stockdemo_loads_no_anywidget_until_show_is_used():
    code = ("import sys, stockdemo\nassert 'anywidget' not in sys.modules\n"
            "stockdemo.show, stockdemo.compare\nprint('anywidget' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
    with pytest.raises(AttributeError):
        stockdemo.no_such_name  # noqa: B018


def test_a_stockpredictor_gets_the_playgrounds_own_picture_and_replay():
    config = RunConfig(seq_len=6, num_layers=2, seed=3)
    x, model = live.build(config)
    payload = payload_of(stockdemo.show(model, x))
    picture = layout(live.run(config).graph, "auto", max_nodes=None)
    assert payload["nodes"]["id"] == [p.id for p in picture.nodes]
    assert payload["counts"]["nodes"] == picture.counts.nodes
    assert {line["file"] for line in payload["trace"]["lines"]} == {"stockdemo/model.py"}
    assert len(payload["trace"]["forward"]) == picture.counts.operations
    assert (payload["box_height"], payload["fill"], payload["stage"]) == (560, False, None)


def test_any_models_payload_holds_autograds_own_ops_and_their_lines():
    model, x = loop_run(5)
    payload = payload_of(stockdemo.show(model, x, view="unrolled"))
    assert drawn_ops(payload) == autograd_ops(model(x))
    assert payload["counts"]["parameters"] == len(list(model.parameters()))
    trace = payload["trace"]
    step_line = next(line for line in trace["lines"] if line["text"].endswith("# the step"))
    assert (step_line["file"], step_line["function"]) == (__file__, "forward")
    assert trace["backward_norm"][0] == pytest.approx(2.0)  # d(out.sum())/d(out): ones, out (4, 1)


def test_show_leaves_the_models_gradients_as_they_were():
    model, x = loop_run(3)
    stockdemo.show(model, x)
    assert all(p.grad is None for p in model.parameters())
    model(x).sum().backward()
    before = [p.grad.clone() for p in model.parameters()]
    stockdemo.show(model, x)
    assert all(torch.equal(p.grad, b) for p, b in zip(model.parameters(), before, strict=True))


def test_show_of_an_output_draws_its_graph_and_leaves_it_usable():
    model, x = loop_run(3)
    out = model(x)
    payload = payload_of(stockdemo.show(out, view="unrolled"))
    assert drawn_ops(payload) == autograd_ops(out)
    assert payload["trace"] is None
    out.sum().backward()  # no backward ran on the learner's graph


def test_update_keeps_the_ids_of_nodes_that_stay_and_marks_the_new_ones():
    model, x = loop_run(4)
    widget = stockdemo.show(model, x, view="unrolled")
    first = widget.run.graph
    widget.update(model, torch.cat([x, x[:, :1]], dim=1))
    payload = payload_of(widget)
    diff = graph_diff(first, widget.run.graph)
    assert diff.added_nodes and not diff.removed_nodes  # one more step: nodes added, none lost
    assert {payload["nodes"]["id"][i] for i in payload["new"]} == {n.id for n in diff.added_nodes}
    assert {n.step for n in diff.added_nodes if n.kind == "op"} == {4}


def test_a_selection_survives_an_update_that_keeps_its_node_and_not_one_that_drops_it():
    model, x = loop_run(5)
    widget = stockdemo.show(model, x, view="unrolled")
    ids = widget.run.graph.by_id
    kept = next(i for i, n in ids.items() if n.step == 0 and n.kind == "op")
    dropped = next(i for i, n in ids.items() if n.step == 4 and n.kind == "op")
    widget.selected = kept
    widget.update(model, x[:, :4])
    payload = payload_of(widget)
    assert payload["nodes"]["id"][payload["selected"]] == kept
    widget.selected = next(i for i in widget.run.graph.by_id if i != kept)
    widget.update(model, x)
    widget.selected = dropped
    widget.update(model, x[:, :4])
    assert widget.selected is None and payload_of(widget)["selected"] is None


def test_a_data_dependent_while_draws_a_different_graph_for_different_data():
    torch.manual_seed(0)
    model = UntilNorm()
    small = stockdemo.show(model, 0.1 * torch.randn(4, 3))
    large = stockdemo.show(model, 3 * torch.randn(4, 3))
    assert payload_of(small)["counts"]["operations"] != payload_of(large)["counts"]["operations"]


def test_compare_puts_both_runs_in_one_view_with_graph_diffs_counts():
    model, x = loop_run(3)
    longer = torch.cat([x, x], dim=1)
    widget = stockdemo.compare((model, x), (model, longer), view="unrolled")
    payload = payload_of(widget)
    cmp = payload["compare"]
    diff = graph_diff(widget.pinned.graph, widget.run.graph)
    assert cmp["counts"]["added_nodes"] == len(diff.added_nodes) > 0
    assert {payload["nodes"]["id"][i] for i in cmp["added"]} == {n.id for n in diff.added_nodes}
    assert cmp["a"]["counts"]["nodes"] < payload["counts"]["nodes"]
    assert (cmp["a_label"], cmp["b_label"]) == ("Loop(4×3×3)", "Loop(4×6×3)")


def test_save_writes_one_offline_file_with_the_payload_and_the_view():
    model, x = loop_run(3)
    widget = stockdemo.show(model, x)
    path = widget.save(ROOT / "artifacts" / "test-notebook-save.html")
    text = path.read_text(encoding="utf-8")
    assert "default-src 'none'" in text and "<script src" not in text
    data = text.split('<script type="application/json" id="stockdemo-data">')[1].split("</script>")[0]
    assert json.loads(data)["nodes"]["id"] == payload_of(widget)["nodes"]["id"]


def test_a_widget_in_chinese_says_its_controls_and_its_saved_handout_in_chinese(tmp_path):
    model, x = loop_run(3)
    widget = stockdemo.show(model, x, lang="zh-CN")
    words = payload_of(widget)["words"]
    assert words["lang"] == "zh-CN" and words["text"]["fit"] == "全图"
    widget.update(model, loop_run(4)[1])  # the next run speaks it too
    assert payload_of(widget)["words"]["lang"] == "zh-CN"
    text = widget.save(tmp_path / "graph.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in text and "Autograd 计算图" in text
    assert payload_of(stockdemo.show(model, x))["words"]["lang"] == "en"  # English unless asked
    with pytest.raises(ValueError, match="lang='fr'"):
        stockdemo.show(model, x, lang="fr")


def test_save_as_svg_writes_the_picture_alone(tmp_path):
    """For slides: the boxes of the view, as an SVG any viewer opens (stockdemo.render.poster)."""
    model, x = loop_run(3)
    widget = stockdemo.show(model, x)
    root = ET.parse(widget.save(tmp_path / "graph.SVG")).getroot()
    svg = "{http://www.w3.org/2000/svg}"
    boxes = [r for r in root.iter(f"{svg}rect") if r.get("class", "").startswith(("pb", "pm"))]
    assert len(boxes) == len(widget.run.picture.nodes) == len(payload_of(widget)["nodes"]["id"])
    assert not list(root.iter(f"{svg}script"))


def test_the_widget_syncs_the_payload_and_the_built_view():
    model, x = loop_run(2)
    state = stockdemo.show(model, x).get_state()
    assert json.loads(state["payload"])["counts"]["operations"] > 0
    assert state["selected"] is None
    assert "render" in state["_esm"] and ".gv-main" in state["_css"] and "--st-font" in state["_css"]


def test_show_refuses_what_it_cannot_draw_and_says_why():
    with pytest.raises(TypeError, match="model and its inputs"):
        stockdemo.show("not a model")
    model, x = loop_run(2)
    with pytest.raises(TypeError, match="output alone"):
        stockdemo.show(model(x), x)
    with torch.no_grad():
        with pytest.raises(ValueError, match="no grad_fn"):
            stockdemo.show(model(x))


def test_unroll_draws_a_rolled_run_of_iterations_box_by_box_and_keeps_the_graph():
    model, x = loop_run(80)  # past the view's node budget: identical steps roll up
    widget = stockdemo.show(model, x)
    rolled = payload_of(widget)
    folds = [rolled["nodes"]["id"][i] for i in rolled["folds"]["node"]]
    assert folds and rolled["counts"]["nodes"] == widget.run.graph.counts.nodes
    assert rolled["folds"]["unrolled"] == []
    widget.unroll = folds
    opened = payload_of(widget)
    assert opened["folds"]["node"] == [] and len(opened["nodes"]["id"]) > len(rolled["nodes"]["id"])
    assert opened["folds"]["unrolled"] == folds  # what the view sends back with the next click
    assert drawn_ops(opened) == autograd_ops(model(x))  # every node drawn, none lost or doubled
    assert opened["counts"]["nodes"] == rolled["counts"]["nodes"] == opened["counts"]["boxes"]
    assert len(opened["trace"]["forward"]) == opened["counts"]["operations"]
