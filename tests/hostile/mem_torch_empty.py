# Tries: a 100 GB tensor.
# Must: end at the memory limit, with torch's own message.
# expect: limit:memory_mb allocate memory
import torch

x = torch.empty(25 * 10**9)
