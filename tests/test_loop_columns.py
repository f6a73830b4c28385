"""A learner's loop over time steps is drawn as the Playground draws steps: one column per
step, left to right; layers (iterations with weights of their own) and loops around the
steps go down. Checked on every graph a training loop's film holds (one per backward(),
recorded in the sandbox) against torch's own walk of the graph each backward() freed."""

from collections import Counter

import pytest
import torch

from harness.autograd import ops_by_type
from harness.loops import CELLS, STEPS, TRAININGS, training_loop, walked_by_torch
from stockdemo.code.view import picture_of_record, record_script
from stockdemo.graph.ids import graph_of_record
from stockdemo.graph.recorder import LineRecorder, raw_graph
from stockdemo.layout.by_code import layout_code
from stockdemo.sandbox import Limits, run_code

PROGRAMS = {f"{cell}, {training}": training_loop(cell, training) for cell in CELLS for training in TRAININGS}


def film_of(source: str) -> tuple[dict, ...]:
    """The run's graphs, from the sandbox; the layout is under test here, not the wall clock,
    which a box busy with other tests can stop these runs on."""
    run = run_code(source, Limits(wall_s=60.0))
    assert run.ok, run.message
    return run.film


def step_loop(graph) -> str:
    """The loop the code names ``t``."""
    code = graph.meta["code"]
    (loop,) = [key for key, name in code["loop_names"].items() if name == "t"]
    return loop


def columns(picture) -> list:
    """The frames of the steps, 't = 0' to 't = STEPS-1', each exactly once."""
    frames = [f for f in picture.frames if str(f.label).startswith("t = ")]
    assert sorted(str(f.label) for f in frames) == [f"t = {k}" for k in range(STEPS)]
    return sorted(frames, key=lambda f: int(str(f.label).removeprefix("t = ")))


def inside(node, frame) -> bool:
    return (frame.x <= node.x - node.w / 2 and node.x + node.w / 2 <= frame.x + frame.w
            and frame.y <= node.y - node.h / 2 and node.y + node.h / 2 <= frame.y + frame.h)


def assert_one_column_per_step(picture) -> None:
    """Steps side by side in one row, x growing with the step; each step's nodes in its column."""
    cols = columns(picture)
    assert len({round(f.y, 3) for f in cols}) == 1, [(str(f.label), f.y) for f in cols]
    for left, right in zip(cols, cols[1:], strict=False):
        assert left.x + left.w <= right.x, (str(left.label), str(right.label))
    loop = step_loop(picture.graph)
    loops = picture.graph.meta["code"]["loops"]
    placed = {p.id: p for p in picture.nodes}
    in_steps = 0
    for node_id, around in loops.items():
        step = dict(around).get(loop)
        if step is not None:
            assert inside(placed[node_id], cols[step]), (node_id, step)
            in_steps += 1
    assert in_steps >= STEPS


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_every_film_frame_of_a_cell_per_step_training_loop_draws_one_column_per_step(name):
    source = PROGRAMS[name]
    film = film_of(source)
    walks = walked_by_torch(source)
    assert len(film) == len(walks) >= 2
    for frame, (raw, walk) in enumerate(zip(film, walks, strict=True)):
        graph = graph_of_record(raw)
        assert Counter(n.op for n in graph.nodes if n.op) == walk, f"graph {frame + 1}"
        assert_one_column_per_step(layout_code(graph, "unrolled"))


def test_the_loss_decides_how_many_graphs_and_each_keeps_its_columns():
    lengths = {cell: len(film_of(training_loop(cell, "while"))) for cell in CELLS}
    assert len(set(lengths.values())) > 1, lengths  # the loss, not the code, set the count


STACKED = """\
import torch
from torch import nn
cells = nn.ModuleList(nn.GRUCell(3 if layer == 0 else 4, 4) for layer in range(3))
x = torch.randn(2, 4, 3)
h = [torch.zeros(2, 4) for _ in cells]
for t in range(4):
    inp = x[:, t]
    for layer in range(3):
        h[layer] = cells[layer](inp, h[layer])
        inp = h[layer]
predictions = h[-1].sum(dim=1)
"""


def test_stacked_cells_inside_each_step_go_down_and_the_steps_go_across():
    raw, namespace = record_script(STACKED)
    picture = picture_of_record(raw, "unrolled")
    ops = Counter(n.op for n in picture.graph.nodes if n.op)
    assert ops == Counter(ops_by_type(namespace["predictions"]))
    steps = sorted((f for f in picture.frames if str(f.label).startswith("t = ")), key=lambda f: str(f.label))
    assert [str(f.label) for f in steps] == [f"t = {t}" for t in range(4)]
    assert [f.x for f in steps] == sorted(f.x for f in steps) and len({f.y for f in steps}) == 1
    for step in steps:
        layers = [f for f in picture.frames if str(f.label).startswith("layer = ")
                  and step.x <= f.x and f.x + f.w <= step.x + step.w]
        assert [str(f.label) for f in sorted(layers, key=lambda f: f.y)] == [f"layer = {k}" for k in range(3)]
        assert len({f.x for f in layers}) == 1  # one under another


def test_an_encoders_layers_each_with_weights_of_their_own_stack_down():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    x = torch.randn(2, 4, 8)
    with LineRecorder() as lines:
        out = encoder(x).sum()
    raw = raw_graph(out, lines, dict(encoder.named_parameters()))
    picture = layout_code(graph_of_record(raw), "unrolled")
    repeats = [f for f in picture.frames if ", repeat " in str(f.label)]
    assert len(repeats) >= 2
    ordered = sorted(repeats, key=lambda f: int(str(f.label).rpartition(" ")[2]))
    assert [f.y for f in ordered] == sorted(f.y for f in ordered) and len({f.x for f in ordered}) == 1
