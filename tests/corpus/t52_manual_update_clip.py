# Updating by hand: p.data -= lr * p.grad under no_grad, with clip_grad_norm_ and grad.zero_().
import torch
from torch import nn

model = nn.RNN(2, 5, batch_first=True)
head = nn.Linear(5, 1)
params = [*model.parameters(), *head.parameters()]
x = torch.randn(4, 8, 2) * 3
y = torch.randn(4, 1)
lr = 0.05

for step in range(5):
    out, _ = model(x)
    loss = ((head(out[:, -1]) - y) ** 2).mean()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad.zero_()
    print(f"step {step}: loss {loss.item():.4f}, gradient norm before clipping {norm.item():.4f}")

nn.utils.clip_grad_value_(params, clip_value=0.1)
flat = nn.utils.parameters_to_vector(params)
print(f"{flat.numel()} numbers in all, |params| = {flat.norm().item():.4f}")
out, _ = model(x)
predictions = head(out[:, -1])
print(predictions)
