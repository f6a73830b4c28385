# nn.LSTMCell in a loop inside a module: two states carried from step to step.
import torch
from torch import nn


class LoopLSTM(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.cell = nn.LSTMCell(n_in, n_hidden)
        self.out = nn.Linear(n_hidden, 1)
        self.n_hidden = n_hidden

    def forward(self, x):
        """x: (batch, seq_len, n_in) -> (batch, 1)"""
        h = torch.zeros(x.shape[0], self.n_hidden)
        c = torch.zeros(x.shape[0], self.n_hidden)
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t], (h, c))
        return self.out(h)


model = LoopLSTM(2, 4)
for seq_len in (2, 4):
    x = torch.randn(3, seq_len, 2)
    y = model(x)
    print(f"seq_len {seq_len}: output {y.flatten()}")

predictions = model(torch.randn(3, 5, 2))
print(f"predictions: {predictions.flatten()}")
