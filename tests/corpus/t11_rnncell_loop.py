# nn.RNNCell in a for loop: the graph grows by one block for every time step.
import torch
from torch import nn

batch, steps, features, hidden = 2, 6, 3, 5
cell = nn.RNNCell(features, hidden)
fc = nn.Linear(hidden, 1)
x = torch.randn(batch, steps, features)

h = torch.zeros(batch, hidden)
for t in range(steps):
    h = cell(x[:, t, :], h)
    print(f"t={t}: |h| = {h.norm().item():.4f}")

predictions = fc(h)
print(f"predictions {tuple(predictions.shape)}: {predictions.flatten()}")
