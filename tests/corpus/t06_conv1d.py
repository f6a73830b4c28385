# nn.Conv1d over a price series: channels, kernel size, padding and pooling over time.
import torch
from torch import nn

prices = torch.cumsum(torch.randn(4, 1, 16) * 0.1, dim=2) + 10  # (batch, channels, time)
print(f"prices {tuple(prices.shape)}, first series starts {prices[0, 0, :4]}")


class ConvPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 6, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(6, 6, kernel_size=3, dilation=2)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        """x: (batch, 1, time) -> (batch, 1)"""
        x = torch.relu(self.conv1(x))
        print(f"after conv1: {tuple(x.shape)}")
        x = torch.relu(self.conv2(x))
        print(f"after conv2: {tuple(x.shape)}")
        return self.fc(self.pool(x).flatten(1))


model = ConvPredictor()
normalised = (prices - prices.mean(dim=2, keepdim=True)) / prices.std(dim=2, keepdim=True)
predictions = model(normalised)
print(f"predictions {tuple(predictions.shape)}: {predictions.flatten()}")
