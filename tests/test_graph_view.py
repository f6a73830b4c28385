"""The graph view's payload: what the browser gets is the picture the server laid out."""

import json
from urllib.parse import quote

import pytest
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT, graph_sent, send_from_view
from stockdemo import RunConfig, lesson, run
from stockdemo.code.view import drawing_of_run
from stockdemo.graph.diff import graph_diff
from stockdemo.layout.steps import NODE_BUDGET, layout
from stockdemo.render.node_table import node_table, node_table_alt
from stockdemo.render.payload import graph_key, node_text, view_payload
from stockdemo.ui.url_sync import selected_from_url


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
    assert node_text(payload, "label") == [str(p.label) for p in picture.nodes]
    sent = {(nodes["id"][a], nodes["id"][b], bool(r)) for a, b, r in
            zip(payload["edges"]["src"], payload["edges"]["dst"], payload["edges"]["recurrent"], strict=True)}
    assert sent == {(e.src, e.dst, e.recurrent) for e in picture.edges}
    assert len(payload["frames"]["x"]) == len(picture.frames)


def test_node_fields_come_from_the_graph_nodes(default_run):
    graph = default_run.graph
    picture = layout(graph, "unrolled", max_nodes=None)
    payload = view_payload(picture)
    nodes = payload["nodes"]
    ops, params, shapes = (node_text(payload, f) for f in ("op", "param", "shape"))
    for i, node_id in enumerate(nodes["id"]):
        node = graph.by_id[node_id]
        assert ops[i] == node.op and params[i] == node.param
        assert nodes["step"][i] == node.step and nodes["layer"][i] == node.layer
        assert (shapes[i] is None) == (node.shape is None)
        assert shapes[i] is None or shapes[i].split("×") == [str(d) for d in node.shape] or \
            (shapes[i] == "scalar" and node.shape == ())


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


def test_rolled_boxes_say_what_they_stand_for_and_the_selection_keeps_its_own_node():
    graph = run(RunConfig(seq_len=8)).graph
    picture = layout(graph, "rolled", max_nodes=None)
    payload = json.loads(json.dumps(view_payload(picture, selected="L0.t0/Addmm0")))
    ids = payload["nodes"]["id"]
    stands = dict(zip((ids[i] for i in payload["stands_for"]["node"]), payload["stands_for"]["text"],
                      strict=True))
    step_ops = {n.id for n in graph.op_nodes if n.role == "step"}
    for drawn, text in stands.items():  # each rolled box: the same op, once per step
        members = [i for i, d in picture.drawn_as.items() if d == drawn]
        assert text == f"{len(members)} nodes, one per time step, t 0…7"
        assert sorted(graph.by_id[i].step for i in members) == list(range(8))
    assert set().union(*([i for i, d in picture.drawn_as.items() if d == b] for b in stands)) == step_ops
    chosen = payload["selected_node"]
    assert ids[payload["selected"]] == picture.drawn_as["L0.t0/Addmm0"] == "L0.t1/Addmm0"
    assert (chosen["id"], chosen["step"], chosen["layer"], chosen["op"]) == \
        ("L0.t0/Addmm0", 0, 0, "AddmmBackward0")  # the node named, not the box's own step
    assert chosen["stands_for"] == stands["L0.t1/Addmm0"] == "8 nodes, one per time step, t 0…7"
    assert chosen["text"] == ("L0.t0/Addmm0 (Addmm, t 0, layer 0), drawn rolled: its box stands "
                              "for 8 nodes, one per time step, t 0…7")
    table = node_table(picture).set_index("id")
    assert table.loc["L0.t1/Addmm0", "stands for"] == chosen["stands_for"]
    assert node_table_alt(picture) == (f"Table of the {len(table)} boxes drawn for the graph's "
                                       f"{graph.counts.summary()}; the column 'stands for' says "
                                       "which boxes draw several nodes")
    unrolled = view_payload(layout(graph, "unrolled", max_nodes=None), selected="L0.t0/Addmm0")
    assert unrolled["stands_for"] == {"node": [], "text": []}
    assert unrolled["selected_node"]["stands_for"] is None
    assert unrolled["selected_node"]["text"] == "L0.t0/Addmm0 (Addmm, t 0, layer 0)"


def test_a_selection_made_at_T5_names_the_same_node_after_T_grows_and_the_view_rolls():
    """The issue's case: L0.t0/Addmm0 selected at T 5, then T moved to 200."""
    at = AppTest.from_file(PLAYGROUND, default_timeout=120)
    at.query_params["node"] = "L0.t0/Addmm0"
    at.run()
    at.session_state["seq_len"] = 200  # as a move of T does, by slider or on the stage
    at.run()
    assert not at.exception
    payload = sent(at)
    assert payload["view"] == "rolled"
    assert at.query_params["node"] == "L0.t0/Addmm0"  # the URL still names it
    chosen = payload["selected_node"]
    assert chosen["id"] == "L0.t0/Addmm0" and chosen["step"] == 0
    assert chosen["stands_for"] == "200 nodes, one per time step, t 0…199"
    line = next(m.value for m in at.markdown if m.value.startswith("Selected node"))
    assert line.startswith("Selected node `L0.t0/Addmm0` (Addmm, t 0, layer 0), drawn rolled: its box "
                           "stands for 200 nodes, one per time step, t 0…199: [inspect")
    assert payload["nodes"]["id"][payload["selected"]] == "L0.t1/Addmm0"  # the box that draws it


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


def test_the_key_the_browser_settles_on_is_the_payloads_graph_key():
    # classroom.stage_settled compares the browser's settled picture with graph_key
    for config in (RunConfig(), RunConfig(seq_len=9, cell="gru")):
        picture = layout(run(config).graph, "auto")
        assert graph_key(picture) == view_payload(picture)["graph"]


def test_the_settle_names_the_picture_and_a_bad_name_is_none():
    at = AppTest.from_file(str(ROOT / "pages/playground.py"), default_timeout=120).run()
    sent = graph_sent(next(e for e in at.get("bidi_component") if e.key == "graph"))
    for value in ({"req": 0, "graph": sent["graph"]}, 3, {"graph": ["x"]}, {"graph": "x" * 500}):
        send_from_view(at, key="stage_settled", trigger={"settled": value})
        assert not at.exception, value


def test_table_lists_the_drawn_graph_nodes_sortably(default_run):
    picture = layout(default_run.graph, "unrolled", max_nodes=None)
    table = node_table(picture)
    assert list(table["id"]) == [p.node.id for p in picture.nodes if p.node is not None]
    assert list(table.columns) == ["id", "op", "shape", "step", "layer", "order in forward",
                                   "order in backward", "gradient norm", "stands for"]
    assert table["stands for"].isna().all()  # unrolled: every box is one node
    steps = table.sort_values("step")["step"].dropna()
    assert steps.is_monotonic_increasing and steps.max() == default_run.config.seq_len - 1


def test_replay_frames_follow_the_traces_orders_node_for_node():
    config = RunConfig(seq_len=4, num_layers=2)
    trace = drawing_of_run(config)[1]
    picture = layout(run(config).graph, "unrolled", max_nodes=None)
    payload = json.loads(json.dumps(view_payload(picture, trace)))
    ids, replay = payload["nodes"]["id"], payload["trace"]
    assert [ids[i] for i in replay["forward"]] == list(trace.forward)
    assert [ids[i] for i in replay["backward"]] == [b.node_id for b in trace.backward]
    assert replay["backward_norm"] == pytest.approx([b.grad_norm for b in trace.backward], rel=1e-5)
    assert dict(zip([ids[i] for i in replay["param"]], replay["param_norm"], strict=True)) \
        == pytest.approx(trace.param_grad_norms, rel=1e-5)
    assert replay["forward_step"] == [-1 if s is None else s for s in trace.step_of_frame]
    for frame, node_id in enumerate(trace.forward):
        line = replay["lines"][replay["forward_line"][frame]]
        assert (line["file"], line["line"]) == (trace.source[node_id].file, trace.source[node_id].line)
    shown = [replay["lines"][i]["line"] for i in replay["code"]]
    assert shown == [s.line for s in trace.forward_code]
    assert replay["error"] == trace.second_backward_error and "second time" in replay["error"]


def test_table_orders_and_norms_come_from_the_trace(default_run):
    trace = drawing_of_run(default_run.config)[1]
    table = node_table(layout(default_run.graph, "unrolled", max_nodes=None), trace).set_index("id")
    by_forward = table.dropna(subset=["order in forward"]).sort_values("order in forward")
    assert list(by_forward.index) == list(trace.forward)
    by_backward = table.dropna(subset=["order in backward"]).sort_values("order in backward")
    assert list(by_backward.index) == [b.node_id for b in trace.backward]
    for node_id, norm in trace.param_grad_norms.items():
        assert table.loc[node_id, "gradient norm"] == pytest.approx(norm)


PLAYGROUND = str(ROOT / "pages" / "playground.py")


def sent(at: AppTest) -> dict:
    return graph_sent(at.get("bidi_component")[0])


def test_a_link_naming_a_node_selects_it_and_links_to_its_inspector():
    node_id = next(n.id for n in run(RunConfig(seq_len=6)).graph.op_nodes if n.step == 3)
    at = AppTest.from_file(PLAYGROUND, default_timeout=120)
    at.query_params["seq_len"] = "6"
    at.query_params["node"] = node_id
    at.run()
    assert not at.exception
    payload = sent(at)
    assert payload["nodes"]["id"][payload["selected"]] == node_id
    link = next(m.value for m in at.markdown if "Debugging" in m.value)
    assert f"/debugging?seq_len=6&node={quote(node_id, safe='')}" in link


def test_a_link_naming_an_unknown_node_selects_nothing_with_a_message():
    at = AppTest.from_file(PLAYGROUND, default_timeout=120)
    at.query_params["node"] = "L3.t9/Nothing0"
    at.run()
    assert not at.exception and sent(at)["selected"] is None
    assert any("does not have" in w.value for w in at.warning)


def test_replay_toggle_sends_the_runs_trace():
    at = AppTest.from_file(PLAYGROUND, default_timeout=120).run()
    assert sent(at)["trace"] is None
    send_from_view(at, replay=True)  # the stage draws its own toggle
    payload = sent(at)
    ids = payload["nodes"]["id"]
    assert [ids[i] for i in payload["trace"]["forward"]] == list(drawing_of_run(RunConfig())[1].forward)


def test_lesson_shows_the_graph_of_the_revealed_run():
    at = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120).run()
    at.button(key="lesson_reveal").click().run()
    at.toggle(key="lesson_graph_shown").set_value(True).run()
    assert not at.exception
    settings = lesson.STEPS[0].settings
    assert len(sent(at)["nodes"]["id"]) == len(layout(run(settings).graph, "auto").nodes)


def test_train_page_replays_the_first_training_step_backward_from_the_loss():
    at = AppTest.from_file(str(ROOT / "pages" / "train.py"), default_timeout=180).run()
    at.button(key="train_go").click().run()
    at.toggle(key="train_replay").set_value(True).run()
    assert not at.exception
    payload = sent(at)
    replay = payload["trace"]
    assert replay["root"] == "loss (MSE)"  # the screen says what backward ran from
    ids = payload["nodes"]["id"]
    step = [ids[i] for i in replay["backward"]]
    assert step and all(i in ids for i in step)
    assert "MseLoss" in " ".join(node_text(payload, "op")[i] or "" for i in replay["forward"])
