# A script in functions with an `if __name__ == "__main__":` guard, as a learner's train.py would be.
import torch
from torch import nn


def make_data(n):
    x = torch.rand(n, 2) * 2 - 1
    y = (x.norm(dim=1, keepdim=True) < 0.7).float()
    return x, y


def train(model, x, y, steps):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for step in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"  step {step}: {loss.item():.4f}")
    return loss.item()


def main():
    x, y = make_data(30)
    print(f"inside the circle: {int(y.sum().item())} of {len(y)}")
    model = nn.Sequential(nn.Linear(2, 12), nn.ReLU(), nn.Linear(12, 1))
    final = train(model, x, y, steps=5)
    print(f"final loss {final:.4f}")
    return model(x[:5])


if __name__ == "__main__":
    predictions = main()
    print(f"__name__ is {__name__!r}; predictions {tuple(predictions.shape)}")
