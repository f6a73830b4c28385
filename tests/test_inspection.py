"""Inspection of a run: hidden states, per-step gradients, prints and saved tensors."""

import re
import sys

import pytest
import torch

from stockdemo.cells import CELLS
from stockdemo.config import PRINT_STEP, RunConfig
from stockdemo.graph.capture import capture_graph
from stockdemo.live import inspection
from stockdemo.live.run import build


def test_package_module_does_not_replace_the_standard_library_inspect():
    import inspect as stdlib_inspect

    assert stdlib_inspect is not inspection
    assert stdlib_inspect.isfunction(test_package_module_does_not_replace_the_standard_library_inspect)
    assert sys.modules["inspect"] is stdlib_inspect


@pytest.mark.parametrize("cell", CELLS)
def test_hidden_states_have_one_T_by_hidden_block_per_layer(cell):
    config = RunConfig(seq_len=7, hidden_size=6, num_layers=2, batch_size=3, cell=cell)
    run = inspection.inspect_run(config)
    assert len(run.hidden) == 2
    assert all(h.shape == (7, 6) for h in run.hidden)


@pytest.mark.parametrize("cell", CELLS)
def test_hidden_states_equal_the_models_own_outputs_at_every_step(cell):
    config = RunConfig(seq_len=6, hidden_size=5, num_layers=3, batch_size=4, cell=cell)
    x, model = build(config)
    with torch.no_grad():
        predictions, states = inspection.hidden_states(model, x)
        out, h_n = model.rnn(x)
        if cell == "lstm":
            h_n, _ = h_n  # nn.LSTM returns (h_n, c_n)
        expected_predictions = model(x)
    torch.testing.assert_close(predictions, expected_predictions)
    # The module returns every step of the last layer, and the last step of every layer.
    torch.testing.assert_close(torch.stack(states[-1], dim=1), out)
    torch.testing.assert_close(torch.stack([layer[-1] for layer in states]), h_n)


@pytest.mark.parametrize("cell", ("rnn", "gru", "lstm"))
def test_every_layer_equals_the_module_run_one_layer_at_a_time(cell):
    """Built-in modules hide the inner layers: rerun each alone, with that layer's weights."""
    config = RunConfig(seq_len=5, hidden_size=4, num_layers=3, batch_size=2, cell=cell)
    x, model = build(config)
    rnn = model.rnn
    with torch.no_grad():
        _, states = inspection.hidden_states(model, x)
        layer_input = x
        for layer in range(rnn.num_layers):
            single = type(rnn)(layer_input.shape[-1], rnn.hidden_size, 1, batch_first=True)
            single.load_state_dict({f"{name}_l0": getattr(rnn, f"{name}_l{layer}")
                                    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})
            layer_input, _ = single(layer_input)
            torch.testing.assert_close(torch.stack(states[layer], dim=1), layer_input)


@pytest.mark.parametrize("cell", ("rnn", "rnn_loop", "lstm", "gru_loop"))
def test_gradient_norms_equal_retain_grad_and_backward_as_the_page_shows(cell):
    """The page teaches ``retain_grad()`` then ``backward()``; the numbers must be those."""
    config = RunConfig(seq_len=4, hidden_size=3, num_layers=2, batch_size=2, input_size=2, cell=cell)
    x, model = build(config)
    norms = inspection.gradient_norms(model, x)

    predictions, states = inspection.hidden_states(model, x, on_step=lambda _l, _t, h: h.retain_grad())
    predictions.sum().backward()
    by_hand = torch.tensor([[h.grad.norm().item() for h in layer] for layer in states])
    assert norms.shape == (2, 4)
    torch.testing.assert_close(norms, by_hand)


def test_last_step_gradient_is_the_output_layer_weight_times_batch():
    """L = predictions.sum() reads h_{T-1} only through fc: dL/dh_{T-1} = fc.weight per sequence."""
    config = RunConfig(seq_len=3, hidden_size=4, num_layers=1, batch_size=5)
    x, model = build(config)
    norms = inspection.gradient_norms(model, x)
    expected = model.fc.weight.detach().norm() * config.batch_size ** 0.5
    assert norms[0, -1].item() == pytest.approx(expected.item(), rel=1e-5)


def test_gradient_vanishes_over_a_long_sequence_at_the_defaults():
    run = inspection.inspect_run(RunConfig(seq_len=50))
    assert run.grad_norms.shape == (1, 50)
    assert run.vanishing_ratio < 1e-6


def test_relu_with_scaled_recurrent_weights_explodes():
    run = inspection.inspect_run(RunConfig(seq_len=50), weight_scale=3.0, nonlinearity="relu")
    assert run.vanishing_ratio > 1e3


def test_weight_scale_multiplies_only_the_recurrent_weights():
    config = RunConfig(num_layers=2, cell="rnn_loop")
    _, plain = build(config)
    _, scaled = inspection.prepare(config, weight_scale=2.0)
    for name, p in scaled.named_parameters():
        factor = 2.0 if "weight_hh" in name else 1.0
        torch.testing.assert_close(p, dict(plain.named_parameters())[name] * factor)


@pytest.mark.parametrize("cell", ("rnn", "rnn_loop"))
def test_relu_rnn_computes_relu_hidden_states(cell):
    x, model = inspection.prepare(RunConfig(cell=cell, num_layers=2), nonlinearity="relu")
    with torch.no_grad():
        _, states = inspection.hidden_states(model, x)
        out, _ = model.rnn(x)
    assert all((h >= 0).all() for layer in states for h in layer)
    torch.testing.assert_close(torch.stack(states[-1], dim=1), out)


def test_prepare_relu_draws_nothing_from_the_global_generator_after_build():
    """Other sessions may sit between their seed and their last draw: leave the RNG alone."""
    config = RunConfig()
    build(config)
    expected = torch.rand(3)
    inspection.prepare(config, nonlinearity="relu")
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("cell", ("rnn", "lstm_loop"))
def test_captured_prints_hold_the_hidden_state_at_the_chosen_step(cell):
    config = RunConfig(seq_len=6, num_layers=2, cell=cell)
    x, model = build(config)
    with torch.no_grad():
        _, states = inspection.hidden_states(model, x)
    text = inspection.captured_prints(model, x, step=3)
    blocks = re.split(r"(?=layer \d+, step)", text.strip())[1:]
    assert len(blocks) == 2
    for layer, block in enumerate(blocks):
        assert block.startswith(f"layer {layer}, step t=3")
        assert f"h.norm()={states[layer][3].norm():.4f}" in block
        printed = [float(v) for v in re.findall(r"-?\d+\.\d+", block.split("h[0] =")[1])]
        torch.testing.assert_close(torch.tensor(printed), states[layer][3][0], atol=6e-5, rtol=0)
        assert not torch.allclose(torch.tensor(printed), states[layer][2][0], atol=6e-5)


@pytest.mark.parametrize("cell", ("rnn", "gru", "lstm_loop"))
def test_the_inspection_prints_the_default_step_as_a_hook_run_of_its_own_does(cell):
    """The page's default prints come from the inspection's forward pass: the same text."""
    config = RunConfig(seq_len=5, num_layers=2, cell=cell)
    run = inspection.inspect_run(config, 1.5, "tanh")
    assert run.prints == inspection.captured_prints(run.model, run.inputs, PRINT_STEP.default)
    assert run.prints.count(f"step t={PRINT_STEP.default}:") == 2


def test_captured_prints_clamp_a_step_beyond_the_sequence():
    config = RunConfig(seq_len=4)
    x, model = build(config)
    assert "step t=3" in inspection.captured_prints(model, x, step=99)


def test_node_ids_map_to_the_grad_fns_of_the_same_names():
    run = inspection.inspect_run(RunConfig(seq_len=4, num_layers=2))
    fns = inspection.grad_fns_by_id(run.output, run.graph, run.model)
    for node in run.graph.nodes:
        if node.kind in ("op", "parameter"):
            assert fns[node.id].name().rsplit("::", 1)[-1] == node.op  # autograd's class name
    params = [n for n in run.graph.nodes if n.kind == "parameter"]
    named = dict(run.model.named_parameters())
    assert all(fns[n.id].variable is named[n.param] for n in params)
    assert any(fn is run.output.grad_fn for fn in fns.values())


def test_node_details_summarise_the_saved_tanh_output():
    run = inspection.inspect_run(RunConfig(seq_len=5))
    details = inspection.node_details(run, "L0.t3/Tanh0")
    assert details.op == "TanhBackward0"
    assert details.inputs and details.outputs
    (saved,) = details.saved
    assert saved.name == "_saved_result"
    # tanh's saved result is h_3 itself, for the whole batch.
    assert saved.shape == (10, 10)
    h3 = run.hidden[0][3]  # sequence 0 only: its range sits inside the batch's
    assert saved.stats["min"] <= h3.min() and saved.stats["max"] >= h3.max()
    assert -1 < saved.stats["min"] < saved.stats["max"] < 1


def test_node_details_say_when_a_saved_tensor_was_freed_by_backward():
    run = inspection.inspect_run(RunConfig(seq_len=3))
    x, model = build(run.config)
    output = model(x)
    graph = capture_graph(output, model, x)
    output.sum().backward()  # frees the saved tensors
    freed = inspection.Inspection(run.config, 1.0, "tanh", x, model, output, graph,
                                  run.hidden, run.grad_norms, run.prints)
    (saved,) = inspection.node_details(freed, "L0.t1/Tanh0").saved
    assert saved.stats is None and str(saved.text).startswith("not readable")


def test_node_details_of_input_and_parameter_nodes_summarise_their_tensors():
    run = inspection.inspect_run(RunConfig())
    (x,) = inspection.node_details(run, "input").saved
    assert x.shape == (10, 5, 3)
    assert x.stats["mean"] == pytest.approx(run.inputs.mean().item(), abs=1e-6)
    (w,) = inspection.node_details(run, "param/rnn.weight_hh_l0").saved
    assert w.shape == (10, 10)
    assert inspection.node_details(run, "param/rnn.weight_hh_l0").outputs


def test_node_details_reject_an_unknown_id():
    run = inspection.inspect_run(RunConfig())
    with pytest.raises(KeyError):
        inspection.node_details(run, "L9.t9/Nope0")
