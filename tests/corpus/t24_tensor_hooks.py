# register_hook on tensors: see a gradient as it flows back, and change it on the way.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
seen = []


def show(grad):
    seen.append(grad.clone())
    print(f"gradient arriving at h: {grad}")


def halve(grad):
    print("halving the gradient for x")
    return grad / 2


h = x * x
h.register_hook(show)
handle = x.register_hook(halve)
loss = (h * torch.tensor([1.0, 10.0, 100.0])).sum()
loss.backward()
print(f"x.grad (halved): {x.grad}")
print(f"hooks saw {len(seen)} gradient(s)")

handle.remove()
x.grad = None
(x * x).sum().backward()
print(f"after remove(): x.grad = {x.grad}")

w = torch.randn(3, requires_grad=True)
predictions = torch.tanh(w * x) * h
predictions.register_hook(lambda grad: print(f"predictions' hook: {grad.shape}"))
print(f"predictions: {predictions}")
