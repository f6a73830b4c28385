# nn.Sequential and nn.ModuleList: stacking layers, activations, and a residual connection.
import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = x + torch.relu(block(x))  # the skip connection
            print(f"  after block {i}: mean {x.mean().item():.4f}")
        return x


model = nn.Sequential(
    nn.Linear(3, 8),
    nn.Tanh(),
    Residual(8, depth=3),
    nn.GELU(),
    nn.Linear(8, 1),
)
print(model)
print(f"first layer: {model[0]}, last layer: {model[-1]}")

x = torch.randn(6, 3)
predictions = model(x)
print(f"predictions: {predictions.squeeze(1)}")
