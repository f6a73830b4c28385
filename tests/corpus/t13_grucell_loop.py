# nn.GRUCell in a loop that also builds a sequence of outputs with torch.stack.
import torch
from torch import nn

cell = nn.GRUCell(input_size=2, hidden_size=3)
readout = nn.Linear(3, 1)
sequence = torch.randn(5, 4, 2)  # (time, batch, features): time first this time

h = torch.zeros(4, 3)
outputs = []
for step, x_t in enumerate(sequence):
    h = cell(x_t, h)
    outputs.append(readout(h))
    print(f"step {step}: first output {outputs[-1][0].item():+.4f}")

predictions = torch.stack(outputs, dim=1).squeeze(2)  # (batch, time)
print(f"predictions {tuple(predictions.shape)}")
print(predictions)
