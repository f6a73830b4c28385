# torch.optim.Rprop: full-batch training using only the sign of the gradient, with step size bounds.
import torch
from torch import nn

x = torch.linspace(-1, 1, 21).unsqueeze(1)
y = x**2
model = nn.Sequential(nn.Linear(1, 10), nn.ReLU(), nn.Linear(10, 1))
optimizer = torch.optim.Rprop(model.parameters(), lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-6, 1.0))

for step in range(12):
    optimizer.zero_grad()
    loss = nn.functional.l1_loss(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 4 == 3:
        print(f"step {step + 1}: L1 loss {loss.item():.4f}")

sizes = optimizer.state[model[2].weight]["step_size"]
print(f"step sizes of the last layer: {sizes.flatten()[:4]}")
predictions = model(x[::5])
print(f"x^2 at {[round(v, 2) for v in x[::5].flatten().tolist()]}: {predictions.flatten()}")
