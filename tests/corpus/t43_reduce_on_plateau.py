# lr_scheduler.ReduceLROnPlateau: cut the learning rate when the validation loss stops improving.
import torch
from torch import nn

x = torch.randn(40, 4)
y = x @ torch.randn(4, 1) + 0.5 * torch.randn(40, 1)
train_x, val_x, train_y, val_y = x[:30], x[30:], y[:30], y[30:]

model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.3)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)

for epoch in range(10):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(train_x), train_y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        val_loss = nn.functional.mse_loss(model(val_x), val_y).item()
    scheduler.step(val_loss)
    lr = optimizer.param_groups[0]["lr"]
    print(f"epoch {epoch}: train {loss.item():.4f} validation {val_loss:.4f} lr {lr:.4f}")

predictions = model(val_x)
print(f"validation predictions: {predictions.flatten()}")
