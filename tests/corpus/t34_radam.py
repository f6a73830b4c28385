# torch.optim.RAdam: rectified Adam, training the seed's RNN for a few steps.
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


input_data = torch.randn(10, 5, 3)
target = input_data[:, :, 0].sum(dim=1, keepdim=True)  # next "price": the sum of the first feature
model = StockPredictor(3, 10, 1, 1)
optimizer = torch.optim.RAdam(model.parameters(), lr=0.01)

for step in range(6):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(input_data), target)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")

predictions = model(input_data)
print(f"predictions {tuple(predictions.shape)}, error {(predictions - target).abs().mean().item():.4f}")
