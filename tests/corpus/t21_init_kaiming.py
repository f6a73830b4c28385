# kaiming_uniform_, kaiming_normal_ and trunc_normal_: initialisations for ReLU networks.
import torch
from torch import nn


class ReluNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, kernel_size=3)
        self.fc1 = nn.Linear(4 * 6, 16)
        self.fc2 = nn.Linear(16, 1)
        nn.init.kaiming_normal_(self.conv.weight, mode="fan_out", nonlinearity="relu")
        nn.init.kaiming_uniform_(self.fc1.weight, nonlinearity="relu")
        nn.init.trunc_normal_(self.fc2.weight, std=0.02, a=-0.04, b=0.04)
        for layer in (self.conv, self.fc1, self.fc2):
            nn.init.zeros_(layer.bias)

    def forward(self, x):
        """x: (batch, 1, 8) -> (batch, 1)"""
        h = torch.relu(self.conv(x)).flatten(1)
        return self.fc2(torch.relu(self.fc1(h)))


model = ReluNet()
print(f"conv std {model.conv.weight.std().item():.4f} (kaiming, fan_out)")
print(f"fc1 |w| <= {model.fc1.weight.abs().max().item():.4f} (kaiming uniform bound {(6 / 24) ** 0.5:.4f})")
print(f"fc2 inside [-0.04, 0.04]: {bool((model.fc2.weight.abs() <= 0.04).all())}")
predictions = model(torch.randn(5, 1, 8))
print(f"predictions: {predictions.flatten()}")
