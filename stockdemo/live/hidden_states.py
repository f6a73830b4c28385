"""Every hidden state of a run, as it is made, in the autograd graph.

The explicit-loop model (``LoopRNN``) calls one cell per time step, so a forward hook
on each cell sees every hidden state. The built-in ``nn.RNN`` / ``nn.GRU`` /
``nn.LSTM`` run all steps inside one C++ call and return only the last layer's
outputs, so the built-in case is unrolled step by step in Python with the module's
own weight tensors (``torch.rnn_tanh_cell`` and friends, the same kernels
``nn.RNNCell`` uses); the tests check the states against the module's own outputs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from stockdemo.model import LoopRNN, StockPredictor

# Called with (layer, step, h), h: (batch, hidden), as each hidden state is made.
StepHook = Callable[[int, int, torch.Tensor], None]


def hidden_states(model: StockPredictor, x: torch.Tensor, on_step: StepHook | None = None,
                  ) -> tuple[torch.Tensor, list[list[torch.Tensor]]]:
    """Run the model and keep every hidden state, in the autograd graph.

    x: (batch, seq_len, features) -> predictions (batch, 1), states[layer][t] (batch, hidden)
    """
    states: list[list[torch.Tensor]] = [[] for _ in range(_num_layers(model.rnn))]

    def keep(layer: int, h: torch.Tensor) -> None:
        t = len(states[layer])
        states[layer].append(h)
        if on_step is not None:
            on_step(layer, t, h)

    if isinstance(model.rnn, LoopRNN):
        handles = [cell.register_forward_hook(_cell_hook(layer, keep))
                   for layer, cell in enumerate(model.rnn.cells)]
        try:
            predictions = model(x)
        finally:
            for handle in handles:
                handle.remove()
    else:
        last = _unroll(model.rnn, x, keep)
        predictions = model.fc(last)
    return predictions, states


def _cell_hook(layer: int, keep: Callable[[int, torch.Tensor], None]):
    def hook(_module: nn.Module, _args: tuple, output) -> None:
        keep(layer, output[0] if isinstance(output, tuple) else output)  # LSTMCell: (h, c)
    return hook


def _unroll(rnn: nn.RNNBase, x: torch.Tensor, keep: Callable[[int, torch.Tensor], None],
            ) -> torch.Tensor:
    """A built-in recurrent module, one Python step at a time, on its own weights.

    x: (batch, seq_len, features) -> last layer's last hidden state (batch, hidden)
    """
    batch = x.shape[0]
    # Step outputs feed the next layer as a list, not re-stacked: indexing a
    # stacked tensor would make each step's backward fill a whole-sequence gradient.
    layer_inputs = x.unbind(dim=1)
    for layer in range(rnn.num_layers):
        w = [getattr(rnn, f"{name}_l{layer}")
             for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h = x.new_zeros(batch, rnn.hidden_size)
        c = x.new_zeros(batch, rnn.hidden_size)
        outputs = []
        for x_t in layer_inputs:
            if isinstance(rnn, nn.LSTM):
                h, c = torch.lstm_cell(x_t, (h, c), *w)
            elif isinstance(rnn, nn.GRU):
                h = torch.gru_cell(x_t, h, *w)
            elif rnn.nonlinearity == "relu":
                h = torch.rnn_relu_cell(x_t, h, *w)
            else:
                h = torch.rnn_tanh_cell(x_t, h, *w)
            keep(layer, h)
            outputs.append(h)
        layer_inputs = outputs
    return h


def _num_layers(rnn: nn.Module) -> int:
    return len(rnn.cells) if isinstance(rnn, LoopRNN) else rnn.num_layers
