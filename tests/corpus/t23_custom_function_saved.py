# A custom Function with ctx.save_for_backward, checked against finite differences by gradcheck.
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_x = grad_output * 3 * ctx.scale * x**2 if ctx.needs_input_grad[0] else None
        return grad_x, None  # no gradient for the plain number `scale`


x = torch.randn(4, dtype=torch.double, requires_grad=True)
ok = torch.autograd.gradcheck(lambda t: Cube.apply(t, 2.0), (x,))
print(f"gradcheck passed: {ok}")

x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
y = Cube.apply(x, 0.5)
y.sum().backward()
print(f"y = {y}")
print(f"dy/dx = 1.5 x^2 = {x.grad}")

w = torch.randn(3, requires_grad=True)
predictions = Cube.apply(torch.tanh(w * x), 1.0) + w
print(f"predictions: {predictions}")
