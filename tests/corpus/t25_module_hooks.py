# Forward hooks and forward pre-hooks on modules: print every layer's output shape and statistics.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
activations = {}


def record(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()
        kind = type(module).__name__
        print(f"{name:8s} {kind:6s} out {tuple(output.shape)} mean {output.mean().item():+.4f}")

    return hook


handles = [layer.register_forward_hook(record(f"layer{i}")) for i, layer in enumerate(model)]


def scale_input(module, args):
    print(f"pre-hook on {type(module).__name__}: input std {args[0].std().item():.4f}")
    return (args[0] * 2,)


pre = model[0].register_forward_pre_hook(scale_input)
x = torch.randn(3, 4)
out = model(x)
dead = (activations["layer1"] == 0).float().mean().item()
print(f"share of ReLU outputs at zero: {dead:.3f}")

for handle in [*handles, pre]:
    handle.remove()
predictions = model(x)
print(f"without hooks, input not scaled: differs {not torch.allclose(out, predictions)}")
print(f"predictions: {predictions.flatten()}")
