# torch.optim.Adagrad with lr_decay: step sizes shrink for parameters that saw large gradients.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 6), nn.Sigmoid(), nn.Linear(6, 2))
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.3, lr_decay=0.01)
x = torch.randn(20, 3)
target = torch.randint(0, 2, (20,))
print(f"class counts: {torch.bincount(target).tolist()}")
loss_fn = nn.CrossEntropyLoss()

for step in range(8):
    optimizer.zero_grad()
    loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    print(f"step {step}: cross-entropy {loss.item():.4f}")

total = optimizer.state[model[0].weight]["sum"]
print(f"sum of squared gradients, first row: {total[0]}")
predictions = torch.log_softmax(model(x[:4]), dim=1)
print(f"log-probabilities:\n{predictions}")
