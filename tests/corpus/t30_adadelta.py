# torch.optim.Adadelta: no learning rate to tune (lr=1.0 scales its own step sizes).
import torch
from torch import nn

torch.manual_seed(42)
x = torch.randn(24, 3)
y = x @ torch.tensor([[1.0], [-1.0], [0.5]])
model = nn.Linear(3, 1, bias=False)
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.9)
print(f"defaults: {optimizer.defaults['rho']=}, {optimizer.defaults['eps']=}")

losses = []
for _ in range(10):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("losses: " + ", ".join(f"{v:.3f}" for v in losses))
print(f"went down: {losses[-1] < losses[0]}")
predictions = model(x[:3])
print(predictions)
