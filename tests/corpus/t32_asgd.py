# torch.optim.ASGD: averaged SGD keeps a running average of the weights ("ax") beside them.
import torch
from torch import nn

x = torch.randn(30, 1)
y = 2 * x + 0.5 + 0.2 * torch.randn(30, 1)
model = nn.Linear(1, 1)
optimizer = torch.optim.ASGD(model.parameters(), lr=0.05, t0=3)

for step in range(10):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f} weight {model.weight.item():.4f}")

average = optimizer.state[model.weight]["ax"]
print(f"averaged weight {average.item():.4f} vs last weight {model.weight.item():.4f}")
predictions = model(torch.tensor([[0.0], [1.0]]))
print(f"f(0) = {predictions[0].item():.3f}, f(1) = {predictions[1].item():.3f}")
