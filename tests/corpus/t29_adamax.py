# torch.optim.Adamax on a logistic regression: a classifier with BCEWithLogitsLoss and accuracy.
import torch
from torch import nn

x = torch.randn(40, 2)
labels = (x[:, 0] + 0.5 * x[:, 1] > 0).float().unsqueeze(1)
model = nn.Linear(2, 1)
loss_fn = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adamax(model.parameters(), lr=0.1)

for step in range(10):
    logits = model(x)
    loss = loss_fn(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    accuracy = ((logits > 0).float() == labels).float().mean().item()
    print(f"step {step}: loss {loss.item():.4f}, accuracy {accuracy:.0%}")

predictions = torch.sigmoid(model(x[:5]))
print(f"probabilities: {predictions.flatten()}")
print(f"labels:        {labels[:5].flatten()}")
