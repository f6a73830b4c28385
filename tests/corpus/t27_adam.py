# torch.optim.Adam training a small MLP to fit a sine curve, printing the loss every few steps.
import math

import torch
from torch import nn

x = torch.linspace(-math.pi, math.pi, 40).unsqueeze(1)
y = torch.sin(x)
model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.02, betas=(0.9, 0.99))

for epoch in range(15):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 3 == 0:
        print(f"epoch {epoch:2d} loss {loss.item():.5f}")

state = optimizer.state[model[0].weight]
print(f"Adam keeps per-parameter state: {sorted(state)} after {int(state['step'])} steps")
predictions = model(x[::10])
print(f"sin at {x[::10].flatten().tolist()[:2]}: {predictions.flatten()}")
