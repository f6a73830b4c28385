# nn.RNN: the seed's stock predictor, one graph block per time step.
import torch
from torch import nn


class StockPredictor(nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers, output_dim):
        super().__init__()
        self.rnn = nn.RNN(input_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])  # only the last time step matters


torch.manual_seed(0)
input_data = torch.randn(10, 5, 3)  # batch 10, 5 time steps, 3 features
model = StockPredictor(input_dim=3, hidden_dim=10, num_layers=1, output_dim=1)
predictions = model(input_data)  # shape (10, 1)
print(predictions)
print(f"shape {tuple(predictions.shape)}, mean {predictions.mean().item():.5f}")
