# torch.optim.AdamW with parameter groups: weight decay on the weights, none on biases and norms.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.ReLU(), nn.Linear(8, 1))
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if name.endswith("bias") or name.startswith("1.") else decay).append(p)
print(f"{len(decay)} tensors with weight decay, {len(no_decay)} without")

optimizer = torch.optim.AdamW([
    {"params": decay, "weight_decay": 0.1},
    {"params": no_decay, "weight_decay": 0.0},
], lr=0.01)

x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(6):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f} |w| {model[0].weight.norm().item():.4f}")

for i, group in enumerate(optimizer.param_groups):
    print(f"group {i}: lr {group['lr']}, weight_decay {group['weight_decay']}")
predictions = model(x)
