# A while loop on the data: an RNN cell runs until the input says stop; the graph's length follows the data.
import torch
from torch import nn

cell = nn.RNNCell(1, 4)
readout = nn.Linear(4, 1)
series = torch.randn(20, 1, 1)

h = torch.zeros(1, 4)
t = 0
while t < len(series) and series[t].abs().item() < 1.0:
    h = cell(series[t], h)
    t += 1
print(f"stopped after {t} steps (value {series[min(t, len(series) - 1)].item():.3f})")

steps_seen = []
for _ in range(3):
    noise = torch.rand(12)
    n = 0
    while n < 12 and noise[n] < 0.8:
        n += 1
    steps_seen.append(n)
print(f"steps per trial: {steps_seen}")

total = 0.0
while total < 3.0:
    h = cell(torch.full((1, 1), 0.5), h)
    total += h.abs().sum().item()
    print(f"  total {total:.3f}")
predictions = readout(h)
print(f"predictions: {predictions}")
