# Training the seed's model on a synthetic price series: windows, a time split, scaling, and a baseline.
import math

import torch
from torch import nn


class StockPredictor(nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers, output_dim):
        super().__init__()
        self.rnn = nn.RNN(input_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])


days = torch.arange(60, dtype=torch.float32)
prices = 100 + 5 * torch.sin(days / 6) + 0.5 * torch.randn(60).cumsum(0)
window = 5
x = torch.stack([prices[i : i + window] for i in range(len(prices) - window)]).unsqueeze(2)
y = prices[window:].unsqueeze(1)
split = int(len(x) * 0.8)
mean, std = prices[: split + window].mean(), prices[: split + window].std()
x_train, y_train = (x[:split] - mean) / std, (y[:split] - mean) / std
x_test, y_test = (x[split:] - mean) / std, (y[split:] - mean) / std
print(f"{len(x_train)} training windows, {len(x_test)} test windows, mean {mean:.2f} std {std:.2f}")

model = StockPredictor(1, 8, 1, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
for epoch in range(12):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x_train), y_train)
    loss.backward()
    optimizer.step()
    if epoch % 4 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")

with torch.no_grad():
    rmse = math.sqrt(nn.functional.mse_loss(model(x_test), y_test).item()) * std
    naive = math.sqrt(nn.functional.mse_loss(x_test[:, -1], y_test).item()) * std
winner = "the model" if rmse < naive else "the baseline"
print(f"test RMSE {rmse:.3f} vs 'tomorrow = today' {naive:.3f}: {winner} wins")
predictions = model(x_test) * std + mean
print(f"next prices: {[round(p, 2) for p in predictions.flatten().tolist()[:4]]}")
