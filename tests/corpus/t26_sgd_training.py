# A training loop with torch.optim.SGD and momentum: zero_grad, backward, step, and a new graph each step.
import torch
from torch import nn

x = torch.randn(32, 2)
y = 3 * x[:, :1] - 2 * x[:, 1:] + 1 + 0.1 * torch.randn(32, 1)

model = nn.Linear(2, 1)
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)

for step in range(8):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")

w, b = model.weight.detach().flatten().tolist(), model.bias.item()
print(f"learned w = [{w[0]:.3f}, {w[1]:.3f}], b = {b:.3f} (true: [3, -2], 1)")
predictions = model(x[:4])
print(f"predictions {predictions.flatten()} vs targets {y[:4].flatten()}")
