# nn.Conv2d, MaxPool2d and Flatten: a tiny image classifier and the shape after each layer.
import torch
from torch import nn

images = torch.randn(3, 1, 8, 8)  # batch, channels, height, width

model = nn.Sequential(
    nn.Conv2d(1, 4, kernel_size=3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(4, 8, kernel_size=3),
    nn.ReLU(),
    nn.Flatten(),
    nn.Linear(8 * 2 * 2, 5),
)

x = images
for layer in model:
    x = layer(x)
    print(f"{layer.__class__.__name__:10s} -> {tuple(x.shape)}")

logits = model(images)
probabilities = torch.softmax(logits, dim=1)
print(f"classes: {probabilities.argmax(dim=1).tolist()}")
print(f"probabilities sum to one: {probabilities.sum(dim=1)}")
predictions = probabilities
