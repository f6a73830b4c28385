# torch.optim.Adafactor: factored second moments (a row and a column vector) for each weight matrix.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.Adafactor(model.parameters(), lr=0.05)
x = torch.randn(16, 6)
y = torch.randn(16, 3)

for step in range(6):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")

state = optimizer.state[model[0].weight]
shapes = {key: tuple(value.shape) for key, value in state.items() if torch.is_tensor(value)}
print(f"state for a 12x6 weight: {shapes}")
predictions = model(x[:2])
print(predictions)
