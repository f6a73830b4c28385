# A custom torch.autograd.Function: rounding with a straight-through gradient.
import torch
from torch import nn


class RoundStraightThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        print(f"RoundStraightThrough.backward got a gradient of shape {tuple(grad_output.shape)}")
        return grad_output  # pretend rounding was the identity


x = torch.tensor([0.2, 1.7, -0.6], requires_grad=True)
y = RoundStraightThrough.apply(x)
print(f"rounded {y}, made by {y.grad_fn.name()}")
y.sum().backward()
print(f"gradient passes straight through: {x.grad}")

plain = torch.tensor([0.2, 1.7, -0.6], requires_grad=True)
torch.round(plain).sum().backward()
print(f"torch.round's own gradient: {plain.grad}")

layer = nn.Linear(3, 2)
inputs = torch.randn(4, 3)
predictions = RoundStraightThrough.apply(layer(inputs) * 4) / 4
print(f"quantised predictions:\n{predictions}")
