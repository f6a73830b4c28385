# Python's random module beside torch's: shuffling a list of samples, both seeded by the run.
import random

import torch
from torch import nn

samples = [(torch.randn(3), float(i % 2)) for i in range(10)]
order = list(range(len(samples)))
random.shuffle(order)
print(f"shuffled order: {order}")
print(f"a random.random(): {random.random():.6f}, a torch.rand(): {torch.rand(1).item():.6f}")

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    random.shuffle(order)
    for i in order[:4]:
        features, label = samples[i]
        loss = nn.functional.binary_cross_entropy_with_logits(model(features), torch.tensor([label]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: trained on {order[:4]}, last loss {loss.item():.4f}")

picked = random.sample(range(10), 3)
predictions = torch.sigmoid(model(torch.stack([samples[i][0] for i in picked])))
print(f"picked {picked}: {predictions.flatten()}")
