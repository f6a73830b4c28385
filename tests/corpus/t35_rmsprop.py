# torch.optim.RMSprop with momentum and centered=True, on a GRU sequence regressor.
import torch
from torch import nn

gru = nn.GRU(1, 6, batch_first=True)
head = nn.Linear(6, 1)
params = list(gru.parameters()) + list(head.parameters())
optimizer = torch.optim.RMSprop(params, lr=0.01, alpha=0.9, momentum=0.5, centered=True)

t = torch.linspace(0, 6, 7)
series = torch.stack([torch.sin(t + phase) for phase in torch.rand(8) * 3])  # (8, 7)
x, y = series[:, :-1].unsqueeze(2), series[:, -1:]
print(f"windows {tuple(x.shape)} -> next value {tuple(y.shape)}")

for step in range(6):
    out, _ = gru(x)
    loss = ((head(out[:, -1]) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.5f}")

out, _ = gru(x)
predictions = head(out[:, -1])
print(f"predicted next values: {predictions.flatten()}")
