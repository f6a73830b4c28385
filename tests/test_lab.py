"""The Lab's experiments, checked against torch itself.

Graph sizes against an independent walk of ``grad_fn.next_functions``;
predictions against the modules run by hand; every broken experiment's
message against the same mistake made here, independently; saved bytes
against a ``saved_tensors_hooks`` count written here.
"""

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from harness.autograd import grad_fns
from stockdemo import lab
from stockdemo.train.prices import BUNDLED


def hooked_bytes(forward) -> tuple[torch.Tensor, int, int]:
    """-> (output, tensors saved, bytes of their distinct storages), counted by a hook here."""
    storages, count = {}, [0]

    def pack(t):
        count[0] += 1
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = forward()
    return out, count[0], sum(storages.values())


def message(action) -> str:
    with pytest.raises(RuntimeError) as error:
        action()
    return str(error.value)


# --- Different lengths -------------------------------------------------------------

@pytest.fixture(scope="module")
def weeks() -> lab.LengthsResult:
    return lab.different_lengths(lab.LengthsConfig())


def test_week_lengths_are_the_trading_days_of_each_calendar_week(weeks):
    table = pd.read_csv(BUNDLED, parse_dates=["Date"])
    days = table[(table.Ticker == "AAPL") & (table.Date.dt.year == 2012)].Date
    per_week = days.groupby(days.dt.to_period("W-SUN")).size()
    assert weeks.lengths == tuple(per_week.iloc[:8])
    assert set(weeks.lengths) == {4, 5}  # New Year, MLK and Presidents' Day weeks are short


def test_each_window_records_its_own_graph_as_long_as_its_window(weeks):
    model = lab.seeded_model("rnn", 10, 0)
    windows = lab.cut_windows(lab.LengthsConfig())
    for window, graph in zip(windows, weeks.window_graphs, strict=True):
        x = torch.from_numpy(window.returns[None, :, None].copy())
        out = model(x)
        assert graph.meta["seq_len"] == len(window.returns)
        # input and output nodes, plus every grad_fn (parameters are AccumulateGrad nodes)
        assert graph.stats["nodes"] == len(grad_fns(out)) + 2
    four = weeks.window_graphs[weeks.lengths.index(4)].stats["nodes"]
    five = weeks.window_graphs[weeks.lengths.index(5)].stats["nodes"]
    assert five - four == 4  # nn.RNN: one more day, one more block of 4 nodes


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
@pytest.mark.parametrize("year", [2001, 2008, 2012])
def test_loop_and_packed_predictions_agree_within_the_stated_tolerance(cell, year):
    result = lab.different_lengths(lab.LengthsConfig(lab_cell=cell, lab_year=year, weeks=12))
    assert result.packed_gap <= lab.PACKED_TOLERANCE
    # and the loop is the module run by hand, window by window
    model = lab.seeded_model(cell, 10, 0)
    by_hand = [model.fc(model.rnn(torch.from_numpy(w.returns[None, :, None].copy()))[0][:, -1])
               for w in lab.cut_windows(result.config)]
    np.testing.assert_allclose(result.one_by_one, torch.cat(by_hand).detach().numpy()[:, 0], atol=0)


def test_padding_without_packing_moves_only_the_short_windows(weeks):
    lengths = np.array(weeks.lengths)
    short = lengths < lengths.max()
    assert (weeks.padded_gaps[short] > 1e-3).all()
    assert (weeks.padded_gaps[~short] <= lab.PACKED_TOLERANCE).all()


def test_packing_records_how_many_windows_run_at_each_step(weeks):
    lengths = np.array(weeks.lengths)
    assert weeks.batch_sizes == tuple(int((lengths > t).sum()) for t in range(lengths.max()))
    assert sorted(lengths[list(weeks.sorted_indices)], reverse=True) == \
        list(lengths[list(weeks.sorted_indices)])


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
def test_the_packed_graph_has_one_step_per_day_each_as_wide_as_packing_says(cell):
    result = lab.different_lengths(lab.LengthsConfig(lab_cell=cell, cut="set", short_len=2,
                                                     long_len=6, weeks=5))
    graph = result.packed_graph
    assert graph.meta["seq_len"] == max(result.lengths) == len(result.batch_sizes)
    for t, windows in enumerate(result.batch_sizes):
        # the step's recurrent matmul: the Addmm fed by W_hh.T, one row per window still running
        (matmul,) = [n for n in graph.op_nodes if n.step == t and n.op == "AddmmBackward0"
                     and any(graph.by_id[s].label == "T" and "param/rnn.weight_hh_l0" in
                             graph.preds.get(s, ()) for s in graph.preds[n.id])]
        assert matmul.shape[0] == windows, t
    assert len(grad_fns(lab.predict_packed(lab.seeded_model(cell, 10, 0), *padded(result)))) + 2 \
        == graph.stats["nodes"]


def padded(result: lab.LengthsResult) -> tuple[torch.Tensor, torch.Tensor]:
    windows = [torch.from_numpy(w.returns[:, None].copy()) for w in lab.cut_windows(result.config)]
    return torch.nn.utils.rnn.pad_sequence(windows, batch_first=True), torch.tensor(result.lengths)


def test_the_longest_windows_you_can_set_still_fit_in_the_data():
    result = lab.different_lengths(lab.LengthsConfig(cut="set", short_len=30, long_len=30,
                                                     weeks=16, lab_year=2012))
    assert result.lengths == (30,) * 16
    assert result.packed_gap <= lab.PACKED_TOLERANCE


def test_lengths_you_set_alternate_long_and_short():
    result = lab.different_lengths(lab.LengthsConfig(cut="set", short_len=2, long_len=7, weeks=5))
    assert result.lengths == (7, 2, 7, 2, 7)
    assert [g.meta["seq_len"] for g in result.window_graphs] == [7, 2, 7, 2, 7]


# --- Break it on purpose -------------------------------------------------------------

def test_backward_twice_raises_torchs_error_and_retain_graph_fixes_it():
    result = lab.twice(lab.BreakConfig())
    w = torch.ones(3, requires_grad=True)
    loss = (w.exp() * 2).sum()
    loss.backward()
    assert result.error == message(loss.backward)
    assert result.fix_ran
    assert result.grad_ratio == pytest.approx(2.0)
    # the nodes stay; what backward() frees is what they saved
    assert result.after.saved.nodes == result.before.saved.nodes
    assert result.after.saved.bytes == 0
    assert result.after.saved.freed == result.before.saved.tensors > 0
    assert result.fixed.saved == result.before.saved


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
def test_a_carried_hidden_state_fails_at_batch_two_and_detach_cuts_the_graph(cell):
    result = lab.carried_state(lab.DetachConfig(lab_cell=cell, batches=5))
    rnn = nn.RNN(1, 4, batch_first=True)
    out, h = rnn(torch.randn(2, 3, 1))
    out.sum().backward()
    out, h = rnn(torch.randn(2, 3, 1), h)  # h not detached
    assert result.error == message(out.sum().backward)
    assert result.failed_at == 2
    nodes = [r.nodes for r in result.retained]
    growth = nodes[1] - nodes[0]
    assert growth > 0 and nodes == [nodes[0] + k * growth for k in range(5)]
    saved = [r.saved_bytes for r in result.retained]
    assert all(b > a for a, b in zip(saved, saved[1:], strict=False))
    assert {r.nodes for r in result.detached} == {nodes[0]}
    assert {r.saved_bytes for r in result.detached} == {saved[0]}
    assert result.after.graph.stats["nodes"] == nodes[-1] + 2  # + input and output nodes


def test_carried_graph_has_every_day_of_every_batch_as_its_own_step():
    result = lab.carried_state(lab.DetachConfig(lab_t=4, batches=3))
    graph = result.after.graph
    for batch in range(3):
        steps = {n.step for n in graph.op_nodes if n.layer == batch and n.role == "step"}
        assert steps == set(range(4)), batch


def test_an_in_place_change_to_a_saved_tensor_raises_torchs_version_error():
    result = lab.in_place(lab.InPlaceConfig())
    cell = nn.RNNCell(1, 10)
    h = torch.zeros(lab.BREAK_BATCH, 10)
    for x_t in torch.randn(lab.BREAK_BATCH, 5, 1).unbind(1):
        h = cell(x_t, h)
        h.mul_(0.5)
    assert result.error == message(lambda: h.sum().backward())
    assert result.version == 1
    assert result.before.saved.modified == 5  # one saved tanh output per day
    assert result.fixed.saved.modified == 0
    assert result.fix_ran


def test_anomaly_mode_names_the_forward_line_that_made_the_nan():
    result = lab.nan(lab.BreakConfig())
    v = torch.tensor([-1.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            loss = torch.where(v > 0, torch.sqrt(v), 0.0).sum()
            assert result.error == message(loss.backward)
    assert result.negative > 0 and np.isfinite(result.loss)
    assert sum(result.nan_grads.values()) > 0
    lines, first = inspect.getsourcelines(lab.volatility)
    at = next(i for i, line in enumerate(lines) if "torch.sqrt(variance)" in line)
    assert result.line.line == first + at
    assert result.line.function == "volatility"
    assert result.line.code == lines[at].strip()
    assert result.fix_ran


def test_no_grad_records_nothing_and_its_mistakes_raise_torchs_errors():
    result = lab.no_grad(lab.NoGradConfig())
    linear = nn.Linear(2, 1)
    with torch.no_grad():
        loss = linear(torch.ones(1, 2)).sum()
    assert result.error == message(loss.backward)
    with torch.inference_mode():
        features = torch.ones(1, 2)
    assert result.inference_error == message(lambda: linear(features).sum().backward())
    recorded, no_grad, inference = result.rows
    model = lab.seeded_model("rnn", 10, 0)
    x, _ = lab.price_windows(5, 32)
    out = model(x)
    assert recorded.nodes == len(grad_fns(out)) and recorded.requires_grad
    assert (no_grad.nodes, no_grad.saved_bytes, inference.nodes, inference.saved_bytes) == (0, 0, 0, 0)
    assert result.fix_ran


# --- What the graph costs ------------------------------------------------------------------

@pytest.mark.parametrize("cell", lab.COST_CELLS)
def test_saved_bytes_match_an_independent_hook_count(cell):
    config = lab.CostConfig(lab_batch=4, lab_hidden=6, max_t=20)
    rows = [r for r in lab.graph_cost(config).rows if r.cell == cell]
    model = lab.seeded_model(cell, 6, 0)
    for row in rows:
        out, tensors, nbytes = hooked_bytes(lambda row=row: model(torch.randn(4, row.seq_len, 1)))
        assert (row.saved_tensors, row.saved_bytes) == (tensors, nbytes)
        assert row.nodes == len(grad_fns(out))
        # the other way to count: read every node's saved tensors afterwards
        walked = lab.saved_in_graph(out)
        assert (walked.tensors, walked.bytes) == (tensors, nbytes)


def test_memory_grows_with_t_even_where_the_node_count_does_not():
    result = lab.graph_cost(lab.CostConfig(max_t=20))
    fused = [r for r in result.rows if r.cell == "lstm"]
    assert len({r.nodes for r in fused}) == 1
    assert fused[-1].saved_bytes > fused[0].saved_bytes
    for cell in ("rnn", "gru", "rnn_loop", "gru_loop", "lstm_loop"):
        nodes, nbytes = result.per_step(cell)
        assert nodes > 0 and nbytes > 0, cell


# --- Configs ------------------------------------------------------------------------------

CONFIGS = sorted({config for config, _ in lab.EXPERIMENTS.values()}, key=lambda c: c.__name__)
text = st.one_of(st.text(max_size=30), st.integers().map(str), st.floats().map(str),
                 st.lists(st.text(max_size=5), max_size=3))


@pytest.mark.parametrize("config", CONFIGS)
@settings(max_examples=60, deadline=None)
@given(params=st.dictionaries(st.sampled_from([k.name for k in lab.KNOBS]), text))
def test_configs_from_any_link_never_raise_and_stay_in_bounds(config, params):
    made, messages = config.from_params(params)
    for knob in config.KNOBS:
        value = getattr(made, knob.name)
        assert value in knob.choices if hasattr(knob, "choices") else knob.low <= value <= knob.high
    assert all(isinstance(m, str) and m for m in messages)


def test_every_knob_of_the_lab_is_one_of_the_page_knobs():
    assert {k.name for c in CONFIGS for k in c.KNOBS} == {k.name for k in lab.KNOBS}
