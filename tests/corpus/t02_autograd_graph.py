# The graph autograd records: grad_fn, next_functions, leaves, retain_grad and detach.
import torch

x = torch.randn(4, requires_grad=True)
h = x.exp()
h.retain_grad()
z = (h * 2 + 1).log().sum()
print(f"is_leaf: x={x.is_leaf}, h={h.is_leaf}, z={z.is_leaf}")

fn = z.grad_fn
depth = 0
while fn is not None:
    print(f"{'  ' * depth}{fn.name()}")
    parents = [f for f, _ in fn.next_functions if f is not None]
    fn = parents[0] if parents else None
    depth += 1

z.backward()
print(f"x.grad = {x.grad}")
print(f"h.grad = {h.grad}")

frozen = h.detach()
print(f"detached: requires_grad={frozen.requires_grad}, grad_fn={frozen.grad_fn}")
with torch.no_grad():
    doubled = x * 2
print(f"made under no_grad: requires_grad={doubled.requires_grad}")

predictions = torch.sigmoid(x * frozen + x.sin())
print(f"predictions = {predictions}")
