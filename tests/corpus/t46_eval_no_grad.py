# Evaluation under torch.no_grad() and model.eval(): no graph is built, so nothing to backward.
import torch
from torch import nn

model = nn.Sequential(nn.Linear(5, 10), nn.BatchNorm1d(10), nn.ReLU(), nn.Dropout(0.2), nn.Linear(10, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
train_x, train_y = torch.randn(32, 5), torch.randn(32, 1)
test_x, test_y = torch.randn(8, 5), torch.randn(8, 1)

for epoch in range(4):
    model.train()
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(train_x), train_y)
    loss.backward()
    optimizer.step()

    model.eval()
    with torch.no_grad():
        test_out = model(test_x)
        test_loss = nn.functional.mse_loss(test_out, test_y)
    print(f"epoch {epoch}: train {loss.item():.4f} test {test_loss.item():.4f} "
          f"(test output requires_grad={test_out.requires_grad}, grad_fn={test_out.grad_fn})")

with torch.inference_mode():
    fast = model(test_x)
print(f"inference_mode tensor: {fast.is_inference()}")

model.eval()
predictions = model(test_x)  # with grad again: this one has a graph to draw
print(f"predictions {tuple(predictions.shape)} have a graph: {predictions.grad_fn is not None}")
print(f"same numbers as under no_grad: {torch.allclose(predictions, test_out)}")
