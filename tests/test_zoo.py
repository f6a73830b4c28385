"""The six benchmark models (stockdemo.zoo): seeded, shaped as their docstrings say, the seed
the lesson's own run, and the ``while`` model's graph set by its data."""

import re

import pytest
import torch

from harness.autograd import ops_by_type
from stockdemo import RunConfig, run
from stockdemo.zoo import ZOO, UntilNorm


def shapes(doc: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """'...; x: (10, 5, 3) -> (10, 1)' -> ((10, 5, 3), (10, 1))"""
    x, out = re.search(r"x: (\([\d, ]+\)) -> (\([\d, ]+\))", doc).groups()
    return tuple(map(int, re.findall(r"\d+", x))), tuple(map(int, re.findall(r"\d+", out)))


@pytest.mark.parametrize("name", ZOO)
def test_each_model_and_input_have_the_shapes_its_docstring_gives(name):
    model, x = ZOO[name]()
    x_shape, out_shape = shapes(ZOO[name].__doc__)
    assert tuple(x.shape) == x_shape
    assert tuple(model(x).shape) == out_shape


@pytest.mark.parametrize("name", ZOO)
def test_each_model_is_seeded_so_two_builds_record_the_same_run(name):
    a_model, a_x = ZOO[name]()
    b_model, b_x = ZOO[name]()
    a, b = a_model(a_x), b_model(b_x)
    assert torch.equal(a, b)
    assert ops_by_type(a) == ops_by_type(b)


def test_the_seed_is_the_lessons_default_run():
    model, x = ZOO["seed"]()
    assert torch.equal(model(x).detach(), run(RunConfig(seed=0)).predictions)


def test_the_while_model_runs_as_many_steps_as_its_data_asks_and_the_graph_follows():
    model = ZOO["while_loop"]()[0]
    steps_seen = set()
    for seed in range(6):
        torch.manual_seed(100 + seed)
        x = torch.randn(10, 3)
        h, steps = torch.zeros(10, model.cell.hidden_size), 0
        with torch.no_grad():  # the loop again by hand, to count its steps
            while h.norm() < model.threshold and steps < model.max_steps:
                h = h + 0.2 * (model.cell(x, h) - h)
                steps += 1
        assert ops_by_type(model(x))["TanhBackward0"] == steps  # one RNNCell tanh a step
        steps_seen.add(steps)
    assert len(steps_seen) > 1, "every input ran the same number of steps"
    assert max(steps_seen) < model.max_steps  # the threshold, not the bound, ended the loops


def test_the_while_model_stops_at_its_bound_when_the_threshold_is_out_of_reach():
    torch.manual_seed(0)
    model = UntilNorm(threshold=1e9, max_steps=7)
    assert ops_by_type(model(torch.randn(4, 3)))["TanhBackward0"] == 7
