# torch.autograd.grad with create_graph=True: the derivative of a derivative.
import torch

x = torch.linspace(-2, 2, 5, requires_grad=True)
y = x**3 - 2 * x
(dy,) = torch.autograd.grad(y.sum(), x, create_graph=True)
print(f"dy/dx = 3x^2 - 2: {dy}")
(d2y,) = torch.autograd.grad(dy.sum(), x, create_graph=True)
print(f"d2y/dx2 = 6x: {d2y}")
for i, xi in enumerate(x.tolist()):
    print(f"  point {i}: x={xi:+.1f} slope={dy[i].item():+.2f} curvature={d2y[i].item():+.2f}")

predictions = d2y * y  # a graph that reaches through both derivatives
print(f"predictions requires grad: {predictions.requires_grad}, {predictions}")
