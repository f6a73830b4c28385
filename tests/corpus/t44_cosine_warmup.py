# CosineAnnealingLR after a LinearLR warm-up (SequentialLR), and LambdaLR, with a closure passed to step().
import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.2, total_iters=3)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6, eta_min=0.001)
scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[3])
x, y = torch.randn(12, 3), torch.randn(12, 1)


def closure():
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


for step in range(9):
    loss = optimizer.step(closure)
    print(f"step {step}: lr {scheduler.get_last_lr()[0]:.5f} loss {loss.item():.4f}")
    scheduler.step()

sgd = torch.optim.SGD(model.parameters(), lr=1.0)
halving = torch.optim.lr_scheduler.LambdaLR(sgd, lr_lambda=lambda epoch: 0.5**epoch)
for _ in range(3):
    sgd.step()
    halving.step()
print(f"LambdaLR after 3 epochs: {halving.get_last_lr()}")
predictions = model(x[:2])
print(predictions)
