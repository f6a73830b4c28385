# torch.optim.LBFGS: step() takes a closure that recomputes the loss, called several times per step.
import torch
from torch import nn

x = torch.linspace(0, 1, 20).unsqueeze(1)
y = 1.5 * x**2 - 0.5 * x + 0.25
features = torch.cat([x, x**2], dim=1)
model = nn.Linear(2, 1)
optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=10, history_size=5)
calls = 0


def closure():
    global calls
    calls += 1
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(features), y)
    loss.backward()
    return loss


for step in range(3):
    loss = optimizer.step(closure)
    print(f"step {step}: loss {loss.item():.6f}, closure called {calls} times so far")

w = model.weight.detach().flatten()
print(f"found y = {w[1].item():.3f} x^2 {w[0].item():+.3f} x {model.bias.item():+.3f}")
predictions = model(features[::6])
print(f"predictions: {predictions.flatten()}")
