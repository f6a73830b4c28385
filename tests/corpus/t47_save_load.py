# torch.save and torch.load of a state_dict in the current folder, then a model rebuilt from it.
import os

import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))


model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(8, 3)
for _ in range(3):
    optimizer.zero_grad()
    model(x).pow(2).mean().backward()
    optimizer.step()

torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}, "checkpoint.pt")
size = os.path.getsize("checkpoint.pt")
print(f"saved: {'checkpoint.pt' in os.listdir('.')}, more than 1 kB: {size > 1000}")

checkpoint = torch.load("checkpoint.pt")
print(f"keys: {sorted(checkpoint)}, epoch {checkpoint['epoch']}")
restored = make_model()
print(restored.load_state_dict(checkpoint["model"]))
restored_opt = torch.optim.Adam(restored.parameters(), lr=0.01)
restored_opt.load_state_dict(checkpoint["optimizer"])
print(f"optimizer state restored for {len(restored_opt.state)} tensors")

torch.save(x, "inputs.pt")
same_x = torch.load("inputs.pt")
print(f"inputs round-trip: {torch.equal(x, same_x)}")
predictions = restored(same_x)
print(f"same predictions as the saved model: {torch.equal(predictions, model(x))}")
os.remove("checkpoint.pt")
os.remove("inputs.pt")
