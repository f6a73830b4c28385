"""The reference the tests check stockdemo against: autograd's own graph behind a tensor, walked
through torch's ``grad_fn.next_functions``.

Written once, and independent of ``stockdemo`` (it is the check): no import of it here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TypeVar

import torch

T = TypeVar("T")


def grad_fns(output: torch.Tensor | object) -> set:
    """Every autograd node behind ``output`` (a tensor, or a node: it is included), AccumulateGrad too."""
    seen: set = set()
    todo = [output.grad_fn if isinstance(output, torch.Tensor) else output]
    while todo:
        fn = todo.pop()
        if fn is not None and fn not in seen:
            seen.add(fn)
            todo.extend(nxt for nxt, _ in fn.next_functions)
    return seen


def ops_by_type(output: torch.Tensor) -> dict[str, int]:
    """Autograd's class name ("AddmmBackward0", "AccumulateGrad") -> how many nodes behind ``output``."""
    return dict(Counter(type(fn).__name__ for fn in grad_fns(output)))


def counted(output: torch.Tensor) -> dict[str, int]:
    """The graph behind ``output`` as the app counts it: its operations, its parameter tensors
    (AccumulateGrad), and its nodes, which are both and the input and the output."""
    ops = ops_by_type(output)
    params = ops.pop("AccumulateGrad", 0)
    return {"operations": sum(ops.values()), "parameters": params, "nodes": sum(ops.values()) + params + 2}


def walks_at_each_backward(run: Callable[[], T]) -> tuple[T, list[Counter]]:
    """``run()`` with torch's own walk of each graph taken just before its ``backward()`` frees
    it -> (what ``run`` returned, each graph's ops by type, in backward order)."""
    walks: list[Counter] = []
    backward = torch.Tensor.backward

    def walked(self, *args, **kwargs):
        walks.append(Counter(ops_by_type(self)))
        return backward(self, *args, **kwargs)

    torch.Tensor.backward = walked
    try:
        return run(), walks
    finally:
        torch.Tensor.backward = backward
