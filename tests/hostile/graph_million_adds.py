# Tries: a graph of a million additions.
# Must: end at the graph-size limit; on a box too busy to record 10,000 nodes in time, at a
#   time limit (tests/test_sandbox.py checks the graph limit alone, with a smaller one).
# expect: limit:graph_nodes|cpu_s|wall_s limit
import torch

x = torch.zeros(1, requires_grad=True)
for _ in range(10**6):
    x = x + 1
predictions = x
