# Gradient accumulation: gradients add up over several backward() calls until zero_grad().
import torch
from torch import nn

w = torch.tensor([1.0, -1.0], requires_grad=True)
x = torch.tensor([2.0, 3.0])
for i in range(3):
    (w * x).sum().backward()
    print(f"after backward {i + 1}: w.grad = {w.grad}")
w.grad = None

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(12, 4)
targets = torch.randn(12, 1)
accumulate = 3
optimizer.zero_grad(set_to_none=True)
print(f"grad after zero_grad(set_to_none=True): {model.weight.grad}")
for i, (xb, yb) in enumerate(zip(data.split(4), targets.split(4), strict=True)):
    loss = nn.functional.mse_loss(model(xb), yb) / accumulate
    loss.backward()
    print(f"micro-batch {i}: loss {loss.item():.4f}, |grad| so far {model.weight.grad.norm().item():.4f}")
optimizer.step()

full = nn.Linear(4, 1)
full.load_state_dict({k: v for k, v in model.state_dict().items()})
predictions = model(data[:3])
print(f"predictions after one accumulated step: {predictions.flatten()}")
