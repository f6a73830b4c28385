# nn.GRU, bidirectional: both directions' last states joined before the output layer.
import torch
from torch import nn


class BiGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(input_size=3, hidden_size=4, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * 4, 1)

    def forward(self, x):
        out, h = self.gru(x)
        both = torch.cat([h[0], h[1]], dim=1)  # forward and backward directions
        return self.fc(both)


model = BiGRU()
x = torch.randn(3, 4, 3)
out, h = model.gru(x)
print(f"out {tuple(out.shape)} (2 directions x 4), h {tuple(h.shape)}")
predictions = model(x)
print(f"predictions {tuple(predictions.shape)}: {predictions.flatten()}")
