# lr_scheduler.StepLR and ExponentialLR: the learning rate printed as it drops during training.
import torch
from torch import nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
x, y = torch.randn(20, 3), torch.randn(20, 1)

for epoch in range(8):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: lr {scheduler.get_last_lr()[0]:.4f} loss {loss.item():.4f}")
    scheduler.step()

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
exponential = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)
rates = []
for _ in range(4):
    optimizer.step()
    exponential.step()
    rates.append(round(optimizer.param_groups[0]["lr"], 5))
print(f"ExponentialLR(gamma=0.8): {rates}")
predictions = model(x[:3])
print(predictions)
