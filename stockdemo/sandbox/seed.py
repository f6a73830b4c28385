"""The code the "Your code" editor starts with: the seed's StockPredictor and the lines that run it.

It is a script as a learner would write it (``python seed.py`` runs it), and the
sandbox draws the graph of the tensor it names ``predictions``.
"""

SEED_CODE = '''\
import torch
from torch import nn


class StockPredictor(nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers, output_dim):
        super().__init__()
        self.rnn = nn.RNN(input_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])   # only the last time step matters


input_data = torch.randn(10, 5, 3)   # batch 10, 5 time steps, 3 features
model = StockPredictor(input_dim=3, hidden_dim=10, num_layers=1, output_dim=1)
predictions = model(input_data)       # shape (10, 1)
'''
