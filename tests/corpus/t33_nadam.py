# torch.optim.NAdam: Adam with Nesterov momentum, on a two-layer network and a Huber loss.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(2, 8), nn.SiLU(), nn.Linear(8, 1))
optimizer = torch.optim.NAdam(model.parameters(), lr=0.05, momentum_decay=0.004)
x = torch.rand(25, 2) * 4 - 2
y = (x[:, :1] * x[:, 1:]).clamp(-1, 1)
loss_fn = nn.HuberLoss(delta=0.5)

for step in range(10):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"{step:2d} {'#' * int(loss.item() * 100)} {loss.item():.4f}")

predictions = model(torch.tensor([[1.0, 1.0], [1.0, -1.0]]))
print(f"product of (1, 1) ~ {predictions[0].item():.3f}, of (1, -1) ~ {predictions[1].item():.3f}")
