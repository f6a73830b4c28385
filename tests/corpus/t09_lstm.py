# nn.LSTM with two layers: hidden and cell states, and their shapes.
import torch
from torch import nn


class LSTMPredictor(nn.Module):
    def __init__(self, n_features, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        print(f"out {tuple(out.shape)}, h {tuple(h.shape)}, c {tuple(c.shape)}")
        return self.head(h[-1])


x = torch.randn(4, 6, 2)
model = LSTMPredictor(n_features=2, hidden=5, layers=2)
print(f"LSTM weights: {[name for name, _ in model.lstm.named_parameters()]}")
predictions = model(x)
print(f"predictions: {predictions.squeeze(1)}")
