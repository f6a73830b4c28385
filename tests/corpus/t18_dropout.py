# nn.Dropout: random zeros in training mode, the identity in eval mode, seeded so it repeats.
import torch
from torch import nn

drop = nn.Dropout(p=0.5)
x = torch.ones(2, 8)

print(f"training mode:\n{drop(x)}")
drop.eval()
print(f"eval mode:\n{drop(x)}")
drop.train()

torch.manual_seed(1)
first = drop(x)
torch.manual_seed(1)
second = drop(x)
print(f"same seed, same mask: {torch.equal(first, second)}")

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))
inputs = torch.randn(4, 8)
kept = (model[2](torch.ones(1000)) != 0).float().mean().item()
print(f"share kept by Dropout(0.3): {kept:.3f}")
predictions = model(inputs)
print(f"predictions with dropout: {predictions.flatten()}")
