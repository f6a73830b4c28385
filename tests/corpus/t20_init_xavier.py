# nn.init.xavier_uniform_ and xavier_normal_: weights scaled to the layer's fan-in and fan-out.
import torch
from torch import nn


def init_weights(module):
    if isinstance(module, nn.Linear):
        if module.out_features > 1:
            nn.init.xavier_uniform_(module.weight)
        else:
            nn.init.xavier_normal_(module.weight)
        nn.init.constant_(module.bias, 0.01)
        print(f"init {module}: std {module.weight.std().item():.4f}")


model = nn.Sequential(nn.Linear(10, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(), nn.Linear(20, 1))
model.apply(init_weights)
bound = (6 / (10 + 20)) ** 0.5
print(f"xavier bound for 10 -> 20: {bound:.4f}, largest weight {model[0].weight.abs().max().item():.4f}")

x = torch.randn(16, 10)
h = x
for layer in model:
    h = layer(h)
    if isinstance(layer, nn.Tanh):
        print(f"activation std after {layer}: {h.std().item():.4f}")
predictions = h
print(f"predictions {tuple(predictions.shape)}, mean {predictions.mean().item():.4f}")
