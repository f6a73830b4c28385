# lr_scheduler.OneCycleLR: warm up then anneal, stepped once per batch, with momentum cycled too.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
total_steps = 10
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=total_steps)
x = torch.randn(10, 2)
y = x.sum(dim=1, keepdim=True)

for step in range(total_steps):
    group = optimizer.param_groups[0]
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(f"step {step}: lr {group['lr']:.5f} momentum {group['momentum']:.3f} loss {loss.item():.4f}")

predictions = model(x)
print(f"mean error after one cycle: {(predictions - y).abs().mean().item():.4f}")
