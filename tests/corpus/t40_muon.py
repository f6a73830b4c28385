# torch.optim.Muon for the 2-D weight matrices, with AdamW for the biases (Muon takes matrices only).
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
matrices = [p for p in model.parameters() if p.ndim == 2]
others = [p for p in model.parameters() if p.ndim != 2]
print(f"{len(matrices)} matrices for Muon, {len(others)} vectors for AdamW")
muon = torch.optim.Muon(matrices, lr=0.02, momentum=0.95)
adamw = torch.optim.AdamW(others, lr=0.01)

x = torch.randn(32, 8)
y = x[:, :1] * x[:, 1:2]
for step in range(6):
    muon.zero_grad()
    adamw.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    muon.step()
    adamw.step()
    print(f"step {step}: loss {loss.item():.4f}")

predictions = model(x[:3])
print(f"predictions {predictions.flatten()} targets {y[:3].flatten()}")
