# nn.init.orthogonal_: an RNN's recurrent weights set orthogonal in __init__, then checked.
import torch
from torch import nn


class OrthoRNN(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.rnn = nn.RNN(n_in, n_hidden, batch_first=True)
        self.fc = nn.Linear(n_hidden, 1)
        for name, param in self.rnn.named_parameters():
            if name.startswith("weight_hh"):
                nn.init.orthogonal_(param)
            elif name.startswith("bias"):
                nn.init.zeros_(param)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


model = OrthoRNN(3, 6)
w = model.rnn.weight_hh_l0
identity = w @ w.T
print(f"W W^T is the identity: {torch.allclose(identity, torch.eye(6), atol=1e-5)}")
print(f"singular values: {torch.linalg.svdvals(w.detach())}")

gain = nn.init.calculate_gain("tanh")
square = torch.empty(4, 4)
nn.init.orthogonal_(square, gain=gain)
print(f"gain for tanh {gain:.4f}: |row 0| = {square[0].norm().item():.4f}")

predictions = model(torch.randn(2, 4, 3))
print(f"predictions: {predictions.flatten()}")
