# Thirty training steps of the seed's model: thirty graphs built and freed, the loss printed every ten.
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
target = input_data.mean(dim=(1, 2)).unsqueeze(1)
model = StockPredictor(input_dim=3, hidden_dim=10, num_layers=1, output_dim=1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
graphs = 0
for step in range(30):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(input_data), target)
    loss.backward()
    optimizer.step()
    graphs += 1
    if step % 10 == 9:
        print(f"step {step + 1}: loss {loss.item():.5f}")
print(f"{graphs} graphs built, each freed by its backward()")
predictions = model(input_data)
first, wanted = predictions[0].item(), target[0].item()
print(f"predictions {tuple(predictions.shape)}, first {first:.4f} (target {wanted:.4f})")
