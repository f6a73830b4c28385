# Tries: to double a tensor with torch.cat until memory runs out.
# Must: end at the memory limit.
# expect: limit:memory_mb memory
import torch

x = torch.ones(1024, 1024)
while True:
    x = torch.cat([x, x])
