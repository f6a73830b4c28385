# torch.optim.SparseAdam for an Embedding(sparse=True), with Adam for the dense layers.
import torch
from torch import nn

n_users, n_items, dim = 12, 9, 4
users = nn.Embedding(n_users, dim, sparse=True)
items = nn.Embedding(n_items, dim, sparse=True)
bias = nn.Linear(1, 1)
sparse_opt = torch.optim.SparseAdam(list(users.parameters()) + list(items.parameters()), lr=0.05)
dense_opt = torch.optim.Adam(bias.parameters(), lr=0.05)

u = torch.randint(0, n_users, (30,))
i = torch.randint(0, n_items, (30,))
ratings = torch.rand(30) * 4 + 1


def predict(u, i):
    dot = (users(u) * items(i)).sum(dim=1, keepdim=True)
    return bias(dot).squeeze(1)


for step in range(8):
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
    loss = ((predict(u, i) - ratings) ** 2).mean()
    loss.backward()
    sparse_opt.step()
    dense_opt.step()
    print(f"step {step}: loss {loss.item():.4f}")

print(f"the embedding's gradient is sparse: {users.weight.grad.is_sparse}")
print(f"rows touched in the last step: {users.weight.grad.coalesce().indices().numel()}")
predictions = predict(u[:5], i[:5])
print(f"predicted ratings {predictions} vs {ratings[:5]}")
