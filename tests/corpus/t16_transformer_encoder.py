# nn.TransformerEncoderLayer: a small encoder over a price series, with a positional encoding.
import math

import torch
from torch import nn


class TinyTransformer(nn.Module):
    def __init__(self, d_model=8, heads=2, layers=2, max_len=16):
        super().__init__()
        self.embed = nn.Linear(1, d_model)
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=16, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 1)

    def forward(self, x):
        """x: (batch, seq_len, 1) -> (batch, 1)"""
        h = self.embed(x) + self.pe[: x.shape[1]]
        h = self.encoder(h)
        return self.head(h[:, -1])


model = TinyTransformer()
print(f"{sum(p.numel() for p in model.parameters())} parameters in {len(model.encoder.layers)} layers")
series = torch.sin(torch.linspace(0, 3, 6)).repeat(2, 1).unsqueeze(2)
predictions = model(series)
print(f"predictions (training mode, dropout on): {predictions.flatten()}")
