# LayerNorm and BatchNorm1d: what each normalises, and BatchNorm's running statistics in eval mode.
import torch
from torch import nn

x = torch.randn(6, 4) * 3 + 5
layer_norm = nn.LayerNorm(4)
batch_norm = nn.BatchNorm1d(4)

ln = layer_norm(x)
print(f"LayerNorm: each row has mean ~0: {ln.mean(dim=1).abs().max().item() < 1e-5}")
bn = batch_norm(x)
print(f"BatchNorm: each column has mean ~0: {bn.mean(dim=0).abs().max().item() < 1e-5}")
print(f"running_mean after one batch: {batch_norm.running_mean}")
print(f"batches seen: {batch_norm.num_batches_tracked.item()}")

batch_norm.eval()
with torch.no_grad():
    in_eval = batch_norm(x)
print(f"eval mode uses running statistics: column means {in_eval.mean(dim=0)}")
batch_norm.train()

model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 8), nn.LayerNorm(8),
                      nn.Linear(8, 1))
predictions = model(x)
print(f"predictions: {predictions.flatten()}")
