"""The seed example's StockPredictor, and an explicit-loop recurrent layer.

``StockPredictor(3, 10, 1, 1)`` is the model from the lesson, line for line.
The ``cell`` option swaps ``nn.RNN`` for ``nn.GRU``, ``nn.LSTM`` or
``LoopRNN``, a plain Python ``for`` loop over ``nn.RNNCell`` /
``nn.GRUCell`` / ``nn.LSTMCell`` whose autograd graph grows with the
sequence length for every cell (on CPU the built-in ``nn.LSTM`` runs as one
fused kernel and records one node per layer).
"""

from __future__ import annotations

import torch
from torch import nn

BUILT_IN = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
CELL_MODULES = {"rnn": nn.RNNCell, "gru": nn.GRUCell, "lstm": nn.LSTMCell}


class StockPredictor(nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers, output_dim, cell="rnn"):
        super().__init__()
        if cell in BUILT_IN:
            self.rnn = BUILT_IN[cell](input_dim, hidden_dim, num_layers, batch_first=True)
        else:
            self.rnn = LoopRNN(input_dim, hidden_dim, num_layers, cell=cell.removesuffix("_loop"))
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        """x: (batch, seq_len, input_dim) -> (batch, output_dim)"""
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])  # only the last time step matters


class LoopRNN(nn.Module):
    """A stack of recurrent cells, run by a Python ``for`` loop over time.

    Same interface as ``nn.RNN(..., batch_first=True)``: the autograd graph it
    records has one block per time step and per layer, because each step is
    an ordinary Python call.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, cell: str = "rnn"):
        super().__init__()
        if cell not in CELL_MODULES:
            raise ValueError(f"cell must be one of {sorted(CELL_MODULES)}, got {cell!r}")
        self.cell = cell
        self.hidden_size = hidden_size
        self.cells = nn.ModuleList(
            CELL_MODULES[cell](input_size if layer == 0 else hidden_size, hidden_size)
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
                if self.cell == "lstm":
                    h, c = cell(x_t, (h, c))
                else:
                    h = cell(x_t, h)
                outputs.append(h)
            layer_input = torch.stack(outputs, dim=1)
            last_states.append(h)
        return layer_input, torch.stack(last_states, dim=0)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
