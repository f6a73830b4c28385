"""The code graph's layout: the seed's script and its eight ready-made edits, run recorded,
checked against torch's own walk of the graph and laid out with every node placed."""

import difflib
import re
from collections import Counter

import pytest
import torch

from harness.autograd import ops_by_type
from stockdemo.code.edits import EDITS, apply, seed_source
from stockdemo.code.view import picture_of_record, record_script
from stockdemo.graph.capture import record_of_run
from stockdemo.graph.diff import graph_diff
from stockdemo.graph.ids import graph_of_record, periodic_runs
from stockdemo.graph.recorder import LineRecorder
from stockdemo.layout.by_code import CodePicture, layout_code
from stockdemo.model import StockPredictor
from stockdemo.render.payload import view_payload

SCRIPTS = {"seed": seed_source()} | {name: apply(edit) for name, edit in EDITS.items()}


def recorded(source: str):
    """-> (Graph, the tensor the script names predictions)."""
    raw, namespace = record_script(source)
    return graph_of_record(raw), namespace["predictions"]


def overlap(a, b) -> bool:
    return abs(a.x - b.x) < (a.w + b.w) / 2 and abs(a.y - b.y) < (a.h + b.h) / 2


def inside(node, frame) -> bool:
    return (frame.x <= node.x - node.w / 2 and node.x + node.w / 2 <= frame.x + frame.w
            and frame.y <= node.y - node.h / 2 and node.y + node.h / 2 <= frame.y + frame.h)


def check_placed(picture) -> None:
    """Every node drawn (as itself or by a box standing for it), no boxes overlap, every edge
    between drawn boxes, everything inside the picture."""
    drawn = {p.id: p for p in picture.nodes}
    assert set(picture.drawn_as) == {n.id for n in picture.graph.nodes}
    assert set(picture.drawn_as.values()) <= set(drawn)
    nodes = sorted(picture.nodes, key=lambda p: p.x)
    for k, a in enumerate(nodes):  # sorted by x: only neighbours within reach can overlap
        for b in nodes[k + 1:]:
            if b.x - b.w / 2 >= a.x + a.w / 2:
                break
            assert not overlap(a, b), (a.id, b.id)
    assert all(e.src in drawn and e.dst in drawn and e.src != e.dst for e in picture.edges)
    for p in picture.nodes:
        assert 0 <= p.x - p.w / 2 and p.x + p.w / 2 <= picture.width
        assert 0 <= p.y - p.h / 2 and p.y + p.h / 2 <= picture.height


def test_every_edit_is_the_seed_changed_in_a_few_lines_and_runs():
    seed = seed_source()
    for name, edit in EDITS.items():
        changed = [line for line in difflib.unified_diff(seed.splitlines(), SCRIPTS[name].splitlines(),
                                                         lineterm="", n=0)
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        assert 0 < len(changed) <= 14, (name, changed)
        assert edit.lesson and edit.title
    with pytest.raises(ValueError, match="expected one"):
        apply(EDITS["skip"], "print('no model here')\n")


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_each_edit_records_autograds_own_ops_and_every_node_is_placed(name):
    graph, predictions = recorded(SCRIPTS[name])
    ops = Counter(n.op for n in graph.nodes if n.op is not None)
    assert dict(ops) == ops_by_type(predictions)
    for view in ("unrolled", "rolled"):
        picture = layout_code(graph, view, budget=0)
        check_placed(picture)


@pytest.mark.parametrize("name", ["loop", "print", "while"])
def test_a_loops_iterations_are_framed_blocks_in_order_left_to_right(name):
    graph, _ = recorded(SCRIPTS[name])
    picture = layout_code(graph, "unrolled")
    frames = {str(f.label): f for f in picture.frames}
    in_loop = [p for p in picture.nodes if p.node is not None and p.node.step is not None]
    assert in_loop
    steps = sorted({p.node.step for p in in_loop})
    assert steps == list(range(len(steps)))
    lines = SCRIPTS[name].splitlines()
    header = next((i for i, text in enumerate(lines, 1) if text.strip().startswith("while")), None)
    label = "t = {}" if name != "while" else f"line {header}, iteration {{}}"
    lefts = [frames[label.format(t)].x for t in steps]
    assert lefts == sorted(lefts) and len(set(lefts)) == len(lefts)
    for p in in_loop:
        assert inside(p, frames[label.format(p.node.step)])


def test_the_while_edit_records_graphs_of_different_lengths_for_two_seeds():
    lengths = {}
    for seed in (0, 1):
        source = SCRIPTS["while"].replace("torch.manual_seed(0)", f"torch.manual_seed({seed})")
        graph, predictions = recorded(source)
        assert dict(Counter(n.op for n in graph.nodes if n.op)) == ops_by_type(predictions)
        lengths[seed] = len({n.step for n in graph.nodes if n.step is not None})
    assert lengths[0] != lengths[1]


def insert_after(source: str, anchor: str, line: str) -> str:
    assert source.count(anchor) == 1
    return source.replace(anchor, anchor + line)


@pytest.mark.parametrize("added", [
    "        print(x.shape)\n",
    "        # a comment above the RNN\n",
    "        scale = 2.0\n",
])
def test_a_line_added_above_keeps_every_nodes_id(added):
    before, _ = recorded(SCRIPTS["loop"])
    after, _ = recorded(insert_after(SCRIPTS["loop"], "    def forward(self, x):\n", added))
    assert graph_diff(before, after).is_empty


def test_a_skip_connection_adds_its_add_node_and_its_edges_and_nothing_else():
    before, _ = recorded(SCRIPTS["seed"])
    after, _ = recorded(SCRIPTS["skip"])
    diff = graph_diff(before, after)
    assert [n.op for n in diff.added_nodes] == ["AddBackward0"]
    assert not diff.removed_nodes and not diff.reshaped_nodes
    add = diff.added_nodes[0].id
    assert diff.added_edges and all(add in edge for edge in diff.added_edges)
    assert len(diff.removed_edges) == 1  # the RNN's output now feeds the Add, not the select


def test_a_hand_written_loop_of_1000_steps_rolls_up_with_exact_counts():
    source = SCRIPTS["loop"].replace("torch.randn(10, 5, 3)", "torch.randn(2, 1000, 3)")
    graph, _ = recorded(source)
    picture = layout_code(graph, "auto")
    assert isinstance(picture, CodePicture) and picture.view == "rolled"
    check_placed(picture)
    (fold_id, fold), = picture.folds.items()
    assert fold.iterations == tuple(range(1, 999))
    members = [i for i, drawn in picture.drawn_as.items() if drawn == fold_id]
    assert len(members) == fold.nodes == sum(1 for n in graph.nodes if n.step in fold.iterations)
    assert re.search(r"998 iterations .* t = 1…998", str(picture.stands_for[fold_id]))
    boxes = sum(1 for p in picture.nodes if p.node is not None)
    assert boxes + fold.nodes == len(graph.nodes)
    unrolled = layout_code(graph, "auto", unroll=frozenset({fold_id}))
    assert unrolled.view == "unrolled" and len(unrolled.nodes) == len(graph.nodes)


NESTED = """\
import torch
from torch import nn
cells = nn.ModuleList(nn.RNNCell(3 if layer == 0 else 4, 4) for layer in range(2))
x = torch.randn(2, 3, 3)
inputs = list(x.unbind(1))
for layer in range(2):
    h = torch.zeros(2, 4)
    for t in range(3):
        h = cells[layer](inputs[t], h)
        inputs[t] = h
predictions = h.sum(dim=1)
"""


def test_nested_loops_are_a_grid_layers_down_and_steps_across():
    graph, predictions = recorded(NESTED)
    assert dict(Counter(n.op for n in graph.nodes if n.op)) == ops_by_type(predictions)
    picture = layout_code(graph, "unrolled")
    check_placed(picture)
    frames = {f.label: f for f in picture.frames}
    assert frames["layer = 0"].y < frames["layer = 1"].y
    for layer in ("layer = 0", "layer = 1"):
        steps = [f for f in picture.frames
                 if str(f.label).startswith("t = ") and inside_frame(f, frames[layer])]
        assert [f.label for f in sorted(steps, key=lambda f: f.x)] == ["t = 0", "t = 1", "t = 2"]


def inside_frame(inner, outer) -> bool:
    return outer.x <= inner.x and inner.x + inner.w <= outer.x + outer.w \
        and outer.y <= inner.y and inner.y + inner.h <= outer.y + outer.h


def test_the_seeds_rnn_steps_run_inside_one_line_form_blocks_by_their_repeated_ops():
    graph, _ = recorded(SCRIPTS["seed"])
    picture = layout_code(graph, "unrolled")
    repeats = sorted(str(f.label) for f in picture.frames)
    line = next(i for i, text in enumerate(SCRIPTS["seed"].splitlines(), 1) if "self.rnn(x)" in text)
    assert repeats == [f"line {line}, repeat {k}" for k in range(5)]
    assert Counter(n.op for n in graph.nodes if n.step == 3) == Counter(
        {"TBackward0": 1, "AddmmBackward0": 1, "AddBackward0": 1, "TanhBackward0": 1})


def test_periodic_runs_finds_the_longest_repeat_then_looks_on_each_side():
    ops = list("xy") + list("abcd") * 4 + list("z") + list("pq") * 3
    assert periodic_runs(ops, 0, len(ops)) == [(2, 4, 4), (19, 2, 3)]
    assert periodic_runs(list("abcdef"), 0, 6) == []


def test_a_stock_predictor_keeps_the_steps_by_layers_layout_with_lines_for_the_hover():
    torch.manual_seed(0)
    model, x = StockPredictor(3, 10, 2, 1), torch.randn(10, 5, 3)
    with LineRecorder() as lines:
        output = model(x)
    picture = picture_of_record(record_of_run(output, model, (x,), lines))
    assert not isinstance(picture, CodePicture)
    assert {"L0.t4/Tanh0", "L1.t0/Tanh0", "input"} <= set(picture.graph.by_id)
    payload = view_payload(picture)
    code = payload["code"]
    texts = {payload["strings"][code["text"][k]] for k in payload["nodes"]["line"] if k >= 0}
    assert {t.split("  #")[0] for t in texts} == {"out, _ = self.rnn(x)", "return self.fc(out[:, -1, :])"}


def test_any_other_model_gets_the_code_layout_and_the_hover_names_its_line():
    raw, _ = record_script(SCRIPTS["loop"])
    picture = picture_of_record(raw)
    assert isinstance(picture, CodePicture)
    payload = view_payload(picture)
    nodes, code, strings = payload["nodes"], payload["code"], payload["strings"]
    tanh = [i for i, op in enumerate(nodes["op"]) if op >= 0 and strings[op] == "TanhBackward0"]
    assert len(tanh) == 5
    for i in tanh:
        k = nodes["line"][i]
        assert strings[code["text"][k]] == "h = self.cell(x[:, t], h)"
        assert strings[code["file"][k]] == "<your code>"
        assert SCRIPTS["loop"].splitlines()[code["line"][k] - 1].strip() == "h = self.cell(x[:, t], h)"
    assert payload["folds"]["node"] == []


def test_a_rolled_box_in_the_payload_says_which_iterations_it_stands_for():
    source = SCRIPTS["loop"].replace("torch.randn(10, 5, 3)", "torch.randn(2, 40, 3)")
    picture = picture_of_record(record_script(source)[0], "rolled")
    folds = view_payload(picture)["folds"]
    assert folds["iterations"] == [38] and (folds["first"], folds["last"]) == ([1], [38])
    assert folds["nodes"] == [38 * 6] and folds["span"] == ["t = 1…38"]


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)[:, -1].sum(dim=1)


def test_an_encoders_identical_layers_roll_up_into_one_box_with_their_exact_count():
    torch.manual_seed(0)
    model, x = Encoder(), torch.randn(2, 4, 8)
    with LineRecorder() as lines:
        output = model(x)
    picture = picture_of_record(record_of_run(output, model, (), lines), "rolled")
    graph = picture.graph
    assert dict(Counter(n.op for n in graph.nodes if n.op)) == ops_by_type(output)
    check_placed(picture)
    (fold_id, fold), = picture.folds.items()
    members = [i for i, drawn in picture.drawn_as.items() if drawn == fold_id]
    assert len(members) == fold.nodes and len(fold.iterations) >= 2
    per_repeat = Counter(graph.by_id[i].step for i in members if graph.by_id[i].kind == "op")
    assert set(per_repeat) == set(fold.iterations) and len(set(per_repeat.values())) == 1
    boxes = sum(1 for p in picture.nodes if p.node is not None)
    assert boxes + fold.nodes == len(graph.nodes)


def test_the_records_node_indices_map_to_the_graphs_ids_for_the_replay():
    raw, _ = record_script(SCRIPTS["loop"])
    graph = graph_of_record(raw)
    ids = graph.meta["code"]["ids"]
    assert len(ids) == len(raw["nodes"]) and len(set(ids)) == len(ids)
    for i, node in enumerate(raw["nodes"]):
        assert graph.by_id[ids[i]].op == node["op"]
