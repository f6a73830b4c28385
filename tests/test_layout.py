"""layout(graph, view) -> Picture: every node accounted for, no overlaps, time grows to the right."""

from collections import defaultdict

import pytest

from stockdemo.cells import CELLS
from stockdemo.config import RunConfig
from stockdemo.graph import STEP, Graph
from stockdemo.layout.steps import layout
from stockdemo.live.run import run

GROWING = ("rnn", "gru", "rnn_loop", "gru_loop", "lstm_loop")  # nn.LSTM on CPU: one fused node


def graph_of(cell: str, seq_len: int, layers: int) -> Graph:
    return run(RunConfig(cell=cell, seq_len=seq_len, num_layers=layers)).graph


def overlap(a, b) -> bool:
    return abs(a.x - b.x) < (a.w + b.w) / 2 and abs(a.y - b.y) < (a.h + b.h) / 2


def inside(node, frame) -> bool:
    return frame.x <= node.x <= frame.x + frame.w and frame.y <= node.y <= frame.y + frame.h


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("view", ["unrolled", "rolled"])
@pytest.mark.parametrize("seq_len,layers", [(1, 1), (5, 2), (40, 3)])
def test_every_node_is_drawn_or_stands_behind_a_drawn_node_like_it(cell, view, seq_len, layers):
    graph = graph_of(cell, seq_len, layers)
    picture = layout(graph, view)
    drawn = {p.id: p for p in picture.nodes}
    assert set(picture.drawn_as) == {n.id for n in graph.nodes}
    for node in graph.nodes:
        shown = drawn[picture.drawn_as[node.id]]
        if shown.node is None:  # a marker: a fold of hidden steps, or the loop of the rolled view
            assert shown.kind in ("fold", "loop") and node.role == STEP
        elif shown.node != node:  # rolled: the same op of the one step shown
            assert picture.view == "rolled" and node.role == STEP
            assert (shown.node.op, shown.node.layer, shown.node.role) == (node.op, node.layer, node.role)
    for p in picture.nodes:
        if p.node is not None:
            assert picture.drawn_as[p.id] == p.id
    assert all(e.src in drawn and e.dst in drawn for e in picture.edges)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_no_boxes_overlap_and_every_box_lies_in_the_picture(cell, view):
    picture = layout(graph_of(cell, 6, 3), view)
    nodes = picture.nodes
    assert not [(a.id, b.id) for k, a in enumerate(nodes) for b in nodes[k + 1:] if overlap(a, b)]
    for p in nodes:
        assert 0 <= p.x - p.w / 2 and p.x + p.w / 2 <= picture.width
        assert 0 <= p.y - p.h / 2 and p.y + p.h / 2 <= picture.height
    for f in picture.frames:
        assert 0 <= f.x and f.x + f.w <= picture.width and 0 <= f.y and f.y + f.h <= picture.height


@pytest.mark.parametrize("cell", ["gru", "lstm_loop"])
def test_every_node_drawn_at_T200_L4_and_no_box_overlaps_within_a_block(cell):
    graph = graph_of(cell, 200, 4)
    picture = layout(graph, "unrolled", max_nodes=None)
    assert picture.folded_steps == 0
    assert len(picture.nodes) == len(graph.nodes)
    assert {p.id for p in picture.nodes} == {n.id for n in graph.nodes}
    assert picture.drawn_as == {n.id: n.id for n in graph.nodes}
    for frame in picture.frames:
        members = [p for p in picture.nodes if inside(p, frame)]
        assert members
        assert not [(a.id, b.id) for k, a in enumerate(members) for b in members[k + 1:] if overlap(a, b)]
        for p in members:  # the whole box, not only its centre, lies in its frame
            assert frame.x <= p.x - p.w / 2 and p.x + p.w / 2 <= frame.x + frame.w
    folded = layout(graph, "unrolled")  # the default budget folds the middle steps
    assert folded.folded_steps > 0 and len(folded.nodes) < len(graph.nodes)


def bands(picture) -> dict[float, list]:
    """Frames by the row they sit on, left to right."""
    rows = defaultdict(list)
    for f in picture.frames:
        rows[round(f.y, 3)].append(f)
    return {y: sorted(fs, key=lambda f: f.x) for y, fs in rows.items()}


@pytest.mark.parametrize("cell", GROWING)
@pytest.mark.parametrize("seq_len,layers", [(2, 1), (4, 2), (9, 3)])
def test_one_more_step_adds_one_block_per_layer_on_the_right(cell, seq_len, layers):
    before = layout(graph_of(cell, seq_len, layers), "unrolled")
    graph = graph_of(cell, seq_len + 1, layers)
    after = layout(graph, "unrolled")
    old, new = bands(before), bands(after)
    assert set(old) == set(new)
    grown = [y for y in old if len(new[y]) == len(old[y]) + 1]
    assert len(grown) == layers
    assert all(len(new[y]) == len(old[y]) for y in old if y not in grown)
    layers_seen = set()
    for y in grown:
        assert new[y][:-1] == old[y]  # the blocks already there stay where they were
        added = new[y][-1]
        assert added.x > max(f.x + f.w for f in old[y])
        members = {p.node for p in after.nodes if inside(p, added)}
        layer = next(iter(members)).layer
        expected = {n for n in graph.op_nodes if n.role == STEP and n.step == seq_len and n.layer == layer}
        assert members == expected
        layers_seen.add(layer)
    assert layers_seen == set(range(layers))


@pytest.mark.parametrize("cell", ["gru", "lstm_loop", "lstm"])
@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_placement_reads_fields_not_ids(cell, view):
    """Rename every node to an opaque id: the picture is the same, box for box."""
    graph = graph_of(cell, 4, 2)
    rename = {n.id: f"n{k}" for k, n in enumerate(graph.nodes)}
    opaque = Graph(tuple(n._replace(id=rename[n.id]) for n in graph.nodes),
                   tuple((rename[a], rename[b]) for a, b in graph.edges), graph.meta)
    ours, theirs = layout(graph, view), layout(opaque, view)
    assert [(rename.get(p.id, p.id), p.label, p.x, p.y) for p in ours.nodes] == \
        [(p.id, p.label, p.x, p.y) for p in theirs.nodes]
    assert {(rename.get(e.src, e.src), rename.get(e.dst, e.dst), e.recurrent) for e in ours.edges} == \
        {(e.src, e.dst, e.recurrent) for e in theirs.edges}
    assert ours.frames == theirs.frames


@pytest.mark.parametrize("cell", GROWING)
def test_recurrent_edges_carry_a_layers_state_to_its_next_step(cell):
    graph = graph_of(cell, 5, 2)
    unrolled = layout(graph, "unrolled")
    recurrent = [e for e in unrolled.edges if e.recurrent]
    assert recurrent
    for e in recurrent:
        a, b = graph.by_id[e.src], graph.by_id[e.dst]
        assert a.layer == b.layer and a.step + 1 == b.step
    rolled = layout(graph, "rolled")
    loops = {p.id for p in rolled.nodes if p.kind == "loop"}
    assert len(loops) == 2
    assert all(e.src in loops or e.dst in loops for e in rolled.edges if e.recurrent)


def test_auto_view_rolls_big_graphs_and_fused_graphs_stay_unrolled():
    assert layout(graph_of("rnn", 5, 1)).view == "unrolled"
    assert layout(graph_of("gru", 120, 1)).view == "rolled"
    assert layout(graph_of("lstm", 120, 1), "rolled").view == "unrolled"
    with pytest.raises(ValueError):
        layout(graph_of("rnn", 5, 1), "sideways")


@pytest.mark.parametrize("cell", GROWING)
def test_step_t_of_every_layer_stands_in_one_column(cell):
    picture = layout(graph_of(cell, 5, 3), "unrolled")
    x_of_step = defaultdict(set)
    for frame in picture.frames:
        steps = {p.node.step for p in picture.nodes if inside(p, frame) and p.node.role == STEP}
        if steps:
            (t,) = steps
            x_of_step[t].add(round(frame.x, 3))
    assert sorted(x_of_step) == list(range(5))
    assert all(len(xs) == 1 for xs in x_of_step.values())


@pytest.mark.parametrize("view", ["unrolled", "rolled"])
def test_placement_reads_only_the_sizes_of_the_styles_boxes(view):
    """Placement and styling are apart: other box texts of the same sizes move nothing."""
    from stockdemo.layout import blocks as layers
    from stockdemo.layout import steps as placing

    class Plain(placing._Style):
        def box(self, n):
            _, w, h = super().box(n)
            return ("?", w, h)

        def fill(self, n):
            return "#000000"

    graph = graph_of("gru", 5, 2)
    rolled = view == "rolled"
    blocks = layers.Blocks(graph)
    drawn = layers.steps_to_draw(blocks, rolled, None)
    styled = placing._Placement(blocks, drawn, placing._Style(graph, rolled))
    plain = placing._Placement(blocks, drawn, Plain(graph, rolled))
    assert [(i, x, y, w, h) for i, (_, x, y, _, w, h) in styled.placed.items()] == \
        [(i, x, y, w, h) for i, (_, x, y, _, w, h) in plain.placed.items()]
    assert [(f.x, f.y, f.w, f.h) for f in styled.frames] == [(f.x, f.y, f.w, f.h) for f in plain.frames]
    assert {label for _, _, _, label, _, _ in plain.placed.values()} == {"?"}
    picture = layout(graph, view)
    assert [(p.id, p.x, p.y) for p in picture.nodes] == \
        [(p.id, p.x, p.y) for p in placing._picture(view, plain, [], {}, 0, "").nodes]
