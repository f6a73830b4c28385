"""Six models to compare graph tools on: each a small ``nn.Module`` and its example input.

The seed first, then models that stretch a graph view in different ways: a long, deep
recurrence (the GRU), repeated identical blocks (the Transformer encoder), skip connections
(the residual CNN), a Python ``for`` loop over a cell, and a ``while`` loop whose length
depends on the data. ``ZOO[name]()`` builds one, seeded, and returns ``(model, x)``:
``model(x)`` records the graph.

    from stockdemo.zoo import ZOO
    model, x = ZOO["transformer"]()
    out = model(x)   # (2, 1)
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from stockdemo.cells import recurrent_layer
from stockdemo.model import StockPredictor

SEED = 0
Builder = Callable[[], tuple[nn.Module, torch.Tensor]]


class TransformerRegressor(nn.Module):
    """``nn.TransformerEncoder`` of 6 layers, pooled over time, then one output.

    x: (batch, seq_len, d_model) -> (batch, 1)
    """

    def __init__(self, d_model: int = 16, heads: int = 2, layers: int = 6):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=32, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, 1)

    def forward(self, x):
        return self.fc(self.encoder(x).mean(dim=1))


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions and the skip around them. x: (batch, C, H, W) -> (batch, C, H, W)"""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class ResidualCNN(nn.Module):
    """A stem convolution, three residual blocks, global pooling, one output.

    x: (batch, 3, H, W) -> (batch, 1)
    """

    def __init__(self, channels: int = 8, blocks: int = 3):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.Sequential(*(ResidualBlock(channels) for _ in range(blocks)))
        self.fc = nn.Linear(channels, 1)

    def forward(self, x):
        h = self.blocks(torch.relu(self.stem(x)))
        return self.fc(h.mean(dim=(2, 3)))


class UntilNorm(nn.Module):
    """An RNN cell, its state moved a fifth of the way to the cell's answer each step, run
    ``while`` the state's norm stays under a threshold (at most ``max_steps``).

    How many steps run depends on the data, so the recorded graph does too.
    x: (batch, features) -> (batch, 1)
    """

    def __init__(self, features: int = 3, hidden: int = 10, threshold: float = 2.5, max_steps: int = 50):
        super().__init__()
        self.cell = nn.RNNCell(features, hidden)
        self.fc = nn.Linear(hidden, 1)
        self.threshold = threshold
        self.max_steps = max_steps

    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
        steps = 0
        while h.norm() < self.threshold and steps < self.max_steps:
            h = h + 0.2 * (self.cell(x, h) - h)
            steps += 1
        return self.fc(h)


def _entry(what: str, x_shape: tuple[int, ...], out_shape: tuple[int, ...],
           make: Callable[[], nn.Module]) -> Builder:
    """A seeded builder: the input drawn first, then the model, as the seed snippet does."""
    def build() -> tuple[nn.Module, torch.Tensor]:
        torch.manual_seed(SEED)
        x = torch.randn(*x_shape)
        return make(), x

    build.__doc__ = f"{what}; x: {x_shape} -> {out_shape}"
    return build


ZOO: dict[str, Builder] = {
    "seed": _entry("The lesson's StockPredictor: nn.RNN, hidden 10, 1 layer", (10, 5, 3), (10, 1),
                   lambda: StockPredictor(3, 10, 1, 1)),
    "gru": _entry("StockPredictor on nn.GRU, hidden 10, 4 layers", (10, 200, 3), (10, 1),
                  lambda: StockPredictor(3, 10, 4, 1, rnn=recurrent_layer("gru"))),
    "transformer": _entry("TransformerRegressor, 6 layers, d_model 16, 2 heads", (2, 12, 16), (2, 1),
                          TransformerRegressor),
    "resnet": _entry("ResidualCNN, 8 channels, 3 residual blocks", (2, 3, 16, 16), (2, 1), ResidualCNN),
    "lstm_loop": _entry("StockPredictor on nn.LSTMCell in a Python for loop, hidden 10, 1 layer",
                        (10, 20, 3), (10, 1),
                        lambda: StockPredictor(3, 10, 1, 1, rnn=recurrent_layer("lstm_loop"))),
    "while_loop": _entry("UntilNorm: an nn.RNNCell until ||h|| >= 2.5 (at most 50 steps)", (10, 3), (10, 1),
                         UntilNorm),
}
