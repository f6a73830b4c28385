"""The seed example's StockPredictor, and an explicit-loop recurrent layer.

``StockPredictor(3, 10, 1, 1)`` is the model from the lesson, line for line.
Its ``rnn`` argument swaps ``nn.RNN`` for ``nn.GRU``, ``nn.LSTM`` or ``LoopRNN``,
a plain Python ``for`` loop over ``nn.RNNCell`` / ``nn.GRUCell`` /
``nn.LSTMCell`` whose autograd graph grows with the sequence length for every
cell (on CPU the built-in ``nn.LSTM`` runs as one fused kernel and records one
node per layer). The cells a run can use are declared in stockdemo/cells.py;
the code a learner sees for a run is this file's own source (stockdemo/live/reproduce.py).
"""

from __future__ import annotations

import torch
from torch import nn


class StockPredictor(nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers, output_dim, rnn=nn.RNN):
        super().__init__()
        self.rnn = rnn(input_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        """x: (batch, seq_len, input_dim) -> (batch, output_dim)"""
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])  # only the last time step matters


class LoopRNN(nn.Module):
    """A stack of recurrent cells, run by a Python ``for`` loop over time.

    Same interface as ``nn.RNN(..., batch_first=True)``: the autograd graph it
    records has one block per time step and per layer, because each step is
    an ordinary Python call. ``cell``: nn.RNNCell, nn.GRUCell or nn.LSTMCell.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, batch_first: bool = True,
                 cell: type[nn.Module] = nn.RNNCell):
        super().__init__()
        if not batch_first:
            raise ValueError("LoopRNN takes x as (batch, seq_len, features): batch_first=True")
        self.hidden_size = hidden_size
        self.cells = nn.ModuleList(
            cell(input_size if layer == 0 else hidden_size, hidden_size)
            for layer in range(num_layers)
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: (batch, seq_len, input_size) -> out (batch, seq_len, hidden), h_n (layers, batch, hidden)"""
        batch = x.shape[0]
        last_states = []
        layer_input = x
        for cell in self.cells:
            h = x.new_zeros(batch, self.hidden_size)
            c = x.new_zeros(batch, self.hidden_size)
            outputs = []
            # unbind once rather than index per step: backward through T
            # indexing ops fills a whole-sequence gradient each step (O(T^2)).
            for x_t in layer_input.unbind(1):
                if isinstance(cell, nn.LSTMCell):
                    h, c = cell(x_t, (h, c))
                else:
                    h = cell(x_t, h)
                outputs.append(h)
            layer_input = torch.stack(outputs, dim=1)
            last_states.append(h)
        return layer_input, torch.stack(last_states, dim=0)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
