"""The graph view's payload: what the browser gets is the picture the server laid out."""

import json

import pytest

from stockdemo import RunConfig, run
from stockdemo.graph import graph_diff
from stockdemo.render import NODE_BUDGET, layout
from stockdemo.ui.graph_view import node_table, selected_from_url, view_payload


@pytest.fixture(scope="module")
def default_run():
    return run(RunConfig())


def test_every_box_and_edge_of_the_picture_reaches_the_browser(default_run):
    picture = layout(default_run.graph, "unrolled", max_nodes=None)
    payload = json.loads(json.dumps(view_payload(picture)))  # what the browser parses
    nodes = payload["nodes"]
    assert nodes["id"] == [p.id for p in picture.nodes]
    for i, p in enumerate(picture.nodes):
        assert abs(nodes["x"][i] - p.x) <= 0.05 and abs(nodes["y"][i] - p.y) <= 0.05
        assert abs(nodes["w"][i] - p.w) <= 0.05 and abs(nodes["h"][i] - p.h) <= 0.05
        assert payload["fills"][nodes["fill"][i]] == p.fill
        assert payload["kinds"][nodes["kind"][i]] == p.kind
    sent = {(nodes["id"][a], nodes["id"][b], bool(r)) for a, b, r in
            zip(payload["edges"]["src"], payload["edges"]["dst"], payload["edges"]["recurrent"], strict=True)}
    assert sent == {(e.src, e.dst, e.recurrent) for e in picture.edges}
    assert len(payload["frames"]["x"]) == len(picture.frames)


def test_node_fields_come_from_the_graph_nodes(default_run):
    graph = default_run.graph
    picture = layout(graph, "unrolled", max_nodes=None)
    nodes = view_payload(picture)["nodes"]
    for i, node_id in enumerate(nodes["id"]):
        node = graph.by_id[node_id]
        assert nodes["op"][i] == node.op
        assert nodes["step"][i] == node.step and nodes["layer"][i] == node.layer
        assert nodes["param"][i] == node.param
        assert (nodes["shape"][i] is None) == (node.shape is None)


def test_nodes_new_since_the_previous_run_are_the_graph_diffs_added_nodes():
    before, after = run(RunConfig(seq_len=5)).graph, run(RunConfig(seq_len=6)).graph
    added = [n.id for n in graph_diff(before, after).added_nodes]
    picture = layout(after, "unrolled", max_nodes=None)
    payload = view_payload(picture, new_ids=added)
    marked = {payload["nodes"]["id"][i] for i in payload["new"]}
    assert marked == set(added) and marked
    assert all(after.by_id[i].step == 5 for i in marked)


def test_selection_names_the_same_node_and_unknown_ids_select_nothing(default_run):
    picture = layout(default_run.graph, "unrolled", max_nodes=None)
    node_id = next(n.id for n in default_run.graph.op_nodes if n.step == 2)
    chosen, message = selected_from_url(picture, [node_id])
    assert chosen == node_id and message is None
    payload = view_payload(picture, selected=chosen)
    assert payload["nodes"]["id"][payload["selected"]] == node_id
    for raw in (["L9.t99/Nope0"], ["<script>"], ["x" * 500], [""]):
        chosen, message = selected_from_url(picture, raw)
        assert chosen is None and "does not have" in message
    assert selected_from_url(picture, []) == (None, None)


def test_rolled_view_marks_a_step_node_on_the_box_drawn_for_it():
    graph = run(RunConfig(seq_len=8)).graph
    picture = layout(graph, "rolled")
    hidden = next(n.id for n in graph.op_nodes if n.step == 6)
    payload = view_payload(picture, new_ids=[hidden], selected=hidden)
    drawn = picture.drawn_as[hidden]
    assert payload["nodes"]["id"][payload["selected"]] == drawn
    assert [payload["nodes"]["id"][i] for i in payload["new"]] == [drawn]


def test_unrolled_view_draws_every_node_at_the_largest_run():
    graph = run(RunConfig(seq_len=200, num_layers=4, cell="gru")).graph
    picture = layout(graph, "unrolled", max_nodes=None)
    payload = view_payload(picture)
    graph_ids = {n.id for n in graph.nodes}
    assert graph_ids <= set(payload["nodes"]["id"])
    assert len(graph_ids) > 11_000
    # Past the node budget the default stays the rolled view, a few dozen boxes.
    rolled = layout(graph, "auto")
    assert len(graph.nodes) > NODE_BUDGET and rolled.view == "rolled"
    assert len(view_payload(rolled)["nodes"]["id"]) < NODE_BUDGET


def test_the_graph_key_changes_when_a_label_changes():
    a = view_payload(layout(run(RunConfig(hidden_size=10)).graph, "unrolled"))
    b = view_payload(layout(run(RunConfig(hidden_size=12)).graph, "unrolled"))
    same = view_payload(layout(run(RunConfig(hidden_size=10, seed=3)).graph, "unrolled"))
    assert a["nodes"]["id"] == b["nodes"]["id"] and a["graph"] != b["graph"]
    assert a["graph"] == same["graph"]  # another seed: the same picture, zoom kept


def test_table_lists_the_drawn_graph_nodes_sortably(default_run):
    picture = layout(default_run.graph, "unrolled", max_nodes=None)
    table = node_table(picture)
    assert list(table["id"]) == [p.node.id for p in picture.nodes if p.node is not None]
    assert list(table.columns) == ["id", "op", "shape", "step", "layer", "order in forward",
                                   "order in backward", "gradient norm"]
    steps = table.sort_values("step")["step"].dropna()
    assert steps.is_monotonic_increasing and steps.max() == default_run.config.seq_len - 1
