# Truncated backpropagation through time: detach the hidden state between chunks of a long sequence.
import torch
from torch import nn

rnn = nn.GRU(1, 6, batch_first=True)
head = nn.Linear(6, 1)
optimizer = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=0.02)
sequence = torch.sin(torch.linspace(0, 12, 25)).reshape(1, 25, 1)
inputs, targets = sequence[:, :-1], sequence[:, 1:]

hidden = None
for start in range(0, 24, 6):
    chunk, target = inputs[:, start : start + 6], targets[:, start : start + 6]
    out, hidden = rnn(chunk, hidden)
    loss = nn.functional.mse_loss(head(out), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    hidden = hidden.detach()  # keep the state, drop the graph behind it
    print(f"chunk at {start:2d}: loss {loss.item():.4f}, hidden requires_grad={hidden.requires_grad}")

out, _ = rnn(inputs[:, -6:], hidden)
predictions = head(out[:, -1])
print(f"next value predicted {predictions.item():.4f}")
