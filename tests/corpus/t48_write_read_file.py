# open(..., "w") to log the training losses as CSV in the current folder, then read them back.
import os

import torch
from torch import nn

model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 2)
y = x[:, :1] - x[:, 1:]

with open("losses.csv", "w") as log:
    log.write("step,loss\n")
    for step in range(6):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        log.write(f"{step},{loss.item():.6f}\n")

with open("losses.csv") as log:
    lines = log.read().splitlines()
print(f"{len(lines)} lines, header {lines[0]!r}")
history = [float(line.split(",")[1]) for line in lines[1:]]
for step, value in enumerate(history):
    print(f"step {step}: {'*' * round(value * 20)} {value:.4f}")
print(f"best step: {history.index(min(history))}")

with open("notes.txt", "w") as notes:
    print("trained a linear model", file=notes)
with open("notes.txt", "a") as notes:
    notes.write(f"final loss {history[-1]:.4f}\n")
with open("notes.txt") as notes:
    print(f"notes: {notes.read().splitlines()}")
os.remove("losses.csv")
os.remove("notes.txt")
predictions = model(x[:3])
print(predictions)
