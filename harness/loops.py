"""Training loops a new user writes on the Your code page: the seed's model with a cell per
step (``nn.RNNCell``, ``nn.GRUCell``, ``nn.LSTMCell``) in a loop over time, trained with
Adam for a few epochs, until the loss is low enough, or for one step.

Shared by the layout's tests (``tests/test_loop_columns.py``) and the projector's
browser test: every film frame of each must draw its time steps across, one column a step.
"""

from __future__ import annotations

from collections import Counter

from harness.autograd import ops_by_type, walks_at_each_backward

STEPS = 5  # the time steps of ``input_data``: the columns each graph draws

_MODEL = """\
import torch
from torch import nn


class StockPredictor(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim):
        super().__init__()
        self.cell = nn.{cell}(input_dim, hidden_dim)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
{state}        for t in range(x.shape[1]):
            {step}
        return self.fc(h)


torch.manual_seed(0)
input_data = torch.randn(10, {steps}, 3)
target = torch.randn(10, 1)
model = StockPredictor(input_dim=3, hidden_dim=10, output_dim=1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
{train}predictions = model(input_data)
"""

_STEP = """\
    optimizer.zero_grad()
    loss = ((model(input_data) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
"""

TRAININGS = {
    "epochs": "for epoch in range(5):\n" + _STEP,
    # The loss decides how many graphs there are: 5, 7 and 8 for the three cells.
    "while": "loss = torch.tensor(float('inf'))\nwhile loss.item() > 0.5:\n" + _STEP,
    "one step": "".join(line.removeprefix("    ") + "\n" for line in _STEP.splitlines()),
}

CELLS = {
    "RNNCell": ("", "h = self.cell(x[:, t], h)"),
    "GRUCell": ("", "h = self.cell(x[:, t], h)"),
    "LSTMCell": ("        c = torch.zeros_like(h)\n", "h, c = self.cell(x[:, t], (h, c))"),
}


def training_loop(cell: str, training: str = "epochs") -> str:
    """The program: ``cell`` one of CELLS, ``training`` one of TRAININGS."""
    state, step = CELLS[cell]
    return _MODEL.format(cell=cell, state=state, step=step, steps=STEPS, train=TRAININGS[training])


def walked_by_torch(source: str) -> list[Counter]:
    """Torch's own op counts for ``source`` run here: the graph each backward() freed, walked
    by autograd just before it, then the graph of ``predictions``. (The tests' own programs.)"""
    namespace: dict = {"__name__": "__main__"}
    _, walks = walks_at_each_backward(
        lambda: exec(compile(source, "loop", "exec"), namespace))  # noqa: S102 - the tests' own programs
    return [*walks, Counter(ops_by_type(namespace["predictions"]))]
