# An if on the loss inside the training loop: steps with a high loss add a penalty, so graphs differ in size.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
x, y = torch.randn(16, 3), torch.randn(16, 1)

for step in range(6):
    optimizer.zero_grad()
    mse = nn.functional.mse_loss(model(x), y)
    if mse.item() > 0.93:
        penalty = sum(p.pow(2).sum() for p in model.parameters())
        loss = mse + 0.01 * penalty
        kind = "with an L2 penalty"
    else:
        loss = mse
        kind = "plain"
    loss.backward()
    optimizer.step()
    print(f"step {step}: mse {mse.item():.4f}, loss {loss.item():.4f} ({kind})")

out = model(x)
predictions = out * 2 if out.mean() > 0 else out.abs()  # which branch ran decides the graph
print(f"the mean was {'positive' if out.mean() > 0 else 'not positive'}: {predictions.grad_fn.name()}")
