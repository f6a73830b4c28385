# nn.Module: a small network of Linear layers, its parameters and one forward pass.
import torch
from torch import nn


class TwoLayerNet(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.hidden = nn.Linear(n_in, n_hidden)
        self.out = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        """x: (batch, n_in) -> (batch, n_out)"""
        return self.out(torch.relu(self.hidden(x)))


model = TwoLayerNet(4, 8, 2)
print(model)
for name, p in model.named_parameters():
    print(f"{name:15s} {str(tuple(p.shape)):8s} requires_grad={p.requires_grad}")
total = sum(p.numel() for p in model.parameters())
print(f"{total} parameters")

x = torch.randn(5, 4)
predictions = model(x)
print(f"predictions {tuple(predictions.shape)}:\n{predictions}")
