"""The one backward replay: a real ``backward()`` with a prehook on every node, as a record's ``replay``.

Every replay the app shows comes from here, whoever recorded the run (the Playground's model,
a training step, a learner's code in the sandbox, a notebook's model): ``raw_graph(...,
replay=True)`` calls ``replay_backward`` while the graph is whole, and
``stockdemo.replay.record.trace_of_record`` reads what it wrote.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from functools import lru_cache

import torch

from stockdemo.heap import collector_paused


def replay_backward(output: torch.Tensor, order: list) -> dict:
    """A real backward() from ``output.sum()`` (``output`` itself when a scalar) with a prehook on
    every op node of ``order`` (the record's grad_fns, in its order).

    -> ``saved`` ([tensors, bytes] autograd kept on each node, before backward frees them),
    ``backward`` ([node index, 2-norm of the gradients reaching it] in the engine's order),
    ``leaf_norms`` ({node index: norm of the leaf's .grad}), ``error`` (what backward()
    raised, e.g. after an in-place change, or None) and ``second_error`` (what a second
    backward() raises once the graph is freed, or None). The leaves' ``.grad`` are left as
    they were.
    """
    with collector_paused():
        return _replay(output, order)


def _replay(output: torch.Tensor, order: list) -> dict:
    saved = [list(saved_on(fn)) for fn in order]
    steps: list[list] = []
    handles = [fn.register_prehook(_note(i, steps)) for i, fn in enumerate(order)
               if getattr(fn, "variable", None) is None]
    root = output.sum() if output.dim() else output
    error = second = None
    leaves = [(i, fn.variable) for i, fn in enumerate(order) if getattr(fn, "variable", None) is not None]
    grads_before = [leaf.grad for _, leaf in leaves]
    for _, leaf in leaves:
        leaf.grad = None  # backward adds into a .grad in place: the caller's would change
    try:
        error = _quietly(root.backward)
    finally:
        for handle in handles:
            handle.remove()
    norms = {str(i): _norm(leaf.grad) for i, leaf in leaves if leaf.grad is not None}
    for (_, leaf), before in zip(leaves, grads_before, strict=True):
        leaf.grad = before  # the caller's model is left as it was
    if error is None:
        second = _quietly(root.backward)
        for (_, leaf), before in zip(leaves, grads_before, strict=True):
            leaf.grad = before
    return {"saved": saved, "backward": steps, "leaf_norms": norms, "error": error,
            "second_error": second}


def _quietly(backward: Callable[[], None]) -> str | None:
    """Run a replay's backward() -> what it raised, in words, or None.

    It runs the caller's own hooks and custom Functions' backward again, after their code
    has ended: what they print is not the run's output, and what they raise is the
    replay's error, not the code's.
    """
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            backward()
    except Exception as e:  # noqa: BLE001 - a hook of the caller's may raise anything
        return str(e) if isinstance(e, RuntimeError) else f"{type(e).__name__}: {e}"
    return None


def _norm(grad: torch.Tensor) -> float:
    """A gradient's 2-norm; a sparse one's (an Embedding(sparse=True)'s) over its values."""
    return float(torch.linalg.vector_norm(grad.coalesce().values() if grad.is_sparse else grad))


def _note(i: int, steps: list[list]):
    """A prehook noting node ``i`` and the 2-norm of all its incoming gradients together."""
    def prehook(grad_outputs):
        squares = sum(_norm(g) ** 2 for g in grad_outputs if g is not None)
        steps.append([i, squares ** 0.5])
    return prehook


@lru_cache(maxsize=512)
def saved_names(kind: type) -> tuple[str, ...]:
    """The ``_saved_*`` attributes of a kind of autograd node (``dir()`` of each node costs more
    than the whole walk)."""
    return tuple(a for a in dir(kind) if a.startswith("_saved_"))


# grad_fn type -> its ``_saved_*`` attributes that may hold tensors. An attribute's C++ type
# is fixed per node type: one that held sizes or a scalar once never holds a tensor.
_SAVED_ATTRS: dict[type, tuple[str, ...]] = {}


def saved_on(fn) -> tuple[int, int]:
    """(tensors, bytes) that autograd saved on ``fn`` for its backward."""
    names = _SAVED_ATTRS.get(type(fn))
    first_look = names is None
    if first_look:
        names = saved_names(type(fn))
    count = size = 0
    may_hold = []
    for name in names:
        try:
            value = getattr(fn, name)
        except RuntimeError:  # already freed
            may_hold.append(name)
            continue
        values = value if isinstance(value, (tuple, list)) else (value,)
        if value is None or not values or any(isinstance(t, torch.Tensor) for t in values):
            may_hold.append(name)
        for t in values:
            if isinstance(t, torch.Tensor):
                count += 1
                size += t.numel() * t.element_size()
    if first_look:
        _SAVED_ATTRS[type(fn)] = tuple(may_hold)
    return count, size
