# nn.MultiheadAttention: self-attention over a sequence, its weights and a causal mask.
import torch
from torch import nn

batch, seq_len, dim = 2, 4, 8
x = torch.randn(batch, seq_len, dim)
attention = nn.MultiheadAttention(embed_dim=dim, num_heads=2, batch_first=True)

out, weights = attention(x, x, x)
print(f"out {tuple(out.shape)}, weights {tuple(weights.shape)}")
print(f"each row of weights sums to one: {weights.sum(dim=-1)}")

causal = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
print(f"causal mask (True = hidden):\n{causal}")
out, weights = attention(x, x, x, attn_mask=causal)
print(f"first query sees only itself: {weights[0, 0]}")

predictions = out.mean(dim=1)
print(f"predictions {tuple(predictions.shape)}")
