# Prices in a pandas DataFrame: a moving average and returns turned into tensors for a small model.
import pandas as pd
import torch
from torch import nn

days = pd.date_range("2024-01-01", periods=30, freq="D")
close = 50 + torch.randn(30).cumsum(0)
frame = pd.DataFrame({"close": close.tolist()}, index=days)
frame["ma5"] = frame["close"].rolling(5).mean()
frame["ret"] = frame["close"].pct_change()
frame = frame.dropna()
print(f"{len(frame)} rows from {frame.index[0].date()} to {frame.index[-1].date()}")
print(frame.head(3).round(4).to_string())

features = torch.tensor(frame[["ma5", "ret"]].to_numpy(), dtype=torch.float32)
features = (features - features.mean(dim=0)) / features.std(dim=0)
target = torch.tensor(frame["close"].shift(-1).ffill().to_numpy(), dtype=torch.float32).unsqueeze(1)
model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(features), (target - target.mean()) / target.std())
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
predictions = model(features[-3:])
print(predictions)
