# DataLoader over a TensorDataset: shuffled mini-batches (seeded), epochs, and the last smaller batch.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

x = torch.randn(22, 3)
y = (x.sum(dim=1) > 0).long()
dataset = TensorDataset(x, y)
loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=0)
print(f"{len(dataset)} samples in {len(loader)} batches")

model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(3):
    total, correct = 0.0, 0
    for batch, (xb, yb) in enumerate(loader):
        logits = model(xb)
        loss = loss_fn(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(xb)
        correct += (logits.argmax(dim=1) == yb).sum().item()
        if epoch == 0:
            print(f"  batch {batch}: {len(xb)} samples, labels {yb.tolist()}")
    print(f"epoch {epoch}: loss {total / len(dataset):.4f}, accuracy {correct}/{len(dataset)}")

first_x, first_y = dataset[0]
print(f"dataset[0] = {first_x}, label {first_y.item()}")
predictions = model(x[:4])
