# NumPy and torch: from_numpy shares memory, .numpy() of a detached tensor, and float64 versus float32.
import numpy as np
import torch
from torch import nn

array = np.linspace(0.0, 1.0, 6)
shared = torch.from_numpy(array)
array[0] = -1.0
print(f"from_numpy shares memory: {shared[0].item()}, dtype {shared.dtype}")
copied = torch.tensor(array, dtype=torch.float32)
print(f"torch.tensor copies: {copied}")

model = nn.Linear(1, 1)
out = model(copied.unsqueeze(1))
try:
    out.numpy()
except RuntimeError as err:
    print(f"RuntimeError: {str(err).split('.')[0]}")
values = out.detach().numpy()
print(f"detached to numpy: {values.shape} {values.dtype}, mean {values.mean():.4f}")

weights = torch.tensor(np.array([[0.5, -0.25]]), dtype=torch.float32, requires_grad=True)
features = torch.from_numpy(np.stack([array, array**2], axis=1)).float()
predictions = features @ weights.T + model(features[:, :1])
print(f"predictions {tuple(predictions.shape)}: {predictions.flatten()}")
