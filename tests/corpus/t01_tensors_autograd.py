# Tensors and autograd: requires_grad, a forward computation, backward() and .grad.
import torch

x = torch.tensor([1.0, 2.0, 3.0])
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
b = torch.tensor(0.1, requires_grad=True)
print(f"x = {x}, dtype {x.dtype}, shape {tuple(x.shape)}")
print(f"w.requires_grad = {w.requires_grad}, x.requires_grad = {x.requires_grad}")

y = (w * x).sum() + b
print(f"y = {y.item():.4f}, made by {type(y.grad_fn).__name__}")
y.backward()
print(f"dy/dw = {w.grad}")  # equals x
print(f"dy/db = {b.grad}")

a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
print(f"a =\n{a}")
print(f"a.T @ a has shape {tuple((a.T @ a).shape)}")
print(f"a.mean(dim=0) = {a.mean(dim=0)}")
r = torch.rand(2, 3)
print(f"random numbers, seeded: {r}")

predictions = a * w + b  # broadcasting: (2, 3) * (3,) + ()
print(f"predictions {tuple(predictions.shape)} made by {predictions.grad_fn.name()}")
print(predictions)
