"""A program run in this process, as the sandbox runs it, and what torch's own walk says of it.

For tests that check a verdict against torch itself: the program's names, its error, its last
forward's module calls and its prints (``here``), and facts computed from the real tensors by a
walk of ``grad_fn.next_functions`` (``harness.autograd.grad_fns``), forward hooks on the modules,
and, with the
script's data made to need a gradient (``DATA_NEEDS_GRAD``), which of its time steps torch's
graph reaches (``data_steps``) and where the data joins alone (``data_joins``).
"""

from __future__ import annotations

import contextlib
import io
import random
from dataclasses import dataclass, field

import torch
from torch import nn

from harness.autograd import grad_fns, ops_by_type
from stockdemo.lessons.rerun import SEEDS
from stockdemo.lessons.variants import with_seed

# Prepended to a program: every 3-d tensor drawn by torch.randn/rand (its data: batch, steps,
# features) needs a gradient, and backward() keeps the graph, so torch's walk can read it after.
DATA_NEEDS_GRAD = """\
import torch as __here_torch
def __here_needs_grad(draw):
    def drawn(*size, **options):
        t = draw(*size, **options)
        return t.requires_grad_() if t.dim() == 3 and t.is_floating_point() else t
    return drawn
__here_torch.randn = __here_needs_grad(__here_torch.randn)
__here_torch.rand = __here_needs_grad(__here_torch.rand)
__here_backward = __here_torch.Tensor.backward
__here_torch.Tensor.backward = lambda self, *a, **k: __here_backward(self, *a, **{**k, "retain_graph": True})
"""


@dataclass
class Here:
    """One program run in this process: its names, what it raised, its last forward's module
    calls, how many times it printed."""

    namespace: dict
    error: BaseException | None
    calls: list[tuple[nn.Module, tuple, object]] = field(default_factory=list)
    prints: int = 0

    @property
    def predictions(self) -> torch.Tensor | None:
        value = self.namespace.get("predictions")
        return value if self.error is None and isinstance(value, torch.Tensor) else None


def here(source: str) -> Here:
    """Run ``source`` here as the sandbox does (seed 0 first), every print counted, and the
    module calls of its last forward kept; torch's patched functions (``variants``) restored
    afterwards."""
    saved = (torch.manual_seed, torch.randn, torch.rand, torch.Tensor.backward)
    calls: list = []
    prints = [0]

    def counting_print(*args, **options):
        prints[0] += 1

    namespace: dict = {"__name__": "__main__", "print": counting_print}

    # A model's call starts its forward: a training loop's earlier epochs are not this graph's.
    def enter(module, args):
        if list(module.children()) and not depth:
            calls.clear()
        depth.append(module)

    def leave(module, args, output):
        depth.pop()
        calls.append((module, args, output))

    depth: list = []
    handles = (torch.nn.modules.module.register_module_forward_pre_hook(enter),
               torch.nn.modules.module.register_module_forward_hook(leave))
    torch.manual_seed(0)
    random.seed(0)
    error = None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, "here", "exec"), namespace)
    except Exception as err:  # noqa: BLE001 - the program's own error is a fact about it
        error = err
    finally:
        for handle in handles:
            handle.remove()
        torch.manual_seed, torch.randn, torch.rand, torch.Tensor.backward = saved
    return Here(namespace, error, calls, prints[0])


def first_tensor(output: object) -> torch.Tensor:
    return output[0] if isinstance(output, tuple) else output


def step_calls(ran: Here) -> dict[nn.Module, list[torch.Tensor]]:
    """The modules called more than once (a cell in a loop): their outputs, in call order."""
    by_module: dict[nn.Module, list[torch.Tensor]] = {}
    for module, _, output in ran.calls:
        by_module.setdefault(module, []).append(first_tensor(output))
    return {m: outs for m, outs in by_module.items() if len(outs) > 1}


def loop_steps(ran: Here) -> int:
    """How many of a looped module's calls reach ``predictions`` (the learner's steps)."""
    behind = grad_fns(ran.predictions)
    return max((sum(o.grad_fn in behind for o in outs) for outs in step_calls(ran).values()), default=0)


def rnn_steps(ran: Here) -> int:
    """nn.RNN's time steps behind ``predictions``: its input's length, if its output is used."""
    behind = grad_fns(ran.predictions)
    return max((args[0].shape[1] for module, args, output in ran.calls
                if isinstance(module, nn.RNNBase) and first_tensor(output).grad_fn in behind), default=0)


def draws(ran: Here) -> bool:
    return ran.predictions is not None and ran.predictions.grad_fn is not None


def by_seed(source: str, fact) -> bool:
    """Whether ``fact`` changes between the code's own seed and the others, in the check's
    order, stopping where the check stops (a run that fails ends it)."""
    first = here(source)
    if not draws(first):
        return False
    for k in SEEDS:
        other = here(with_seed(source, k))
        if not draws(other):
            return False
        if fact(other) != fact(first):
            return True
    return False


def signature(ran: Here) -> tuple:
    """The graph's ops by type and its number of edges, from torch's walk."""
    behind = grad_fns(ran.predictions)
    edges = sum(nxt is not None for fn in behind for nxt, _ in fn.next_functions)
    return tuple(sorted(ops_by_type(ran.predictions).items())), edges


def recurrent_fns(ran: Here) -> set:
    """The grad_fns of what a recurrent module returned, and of each call of a looped module."""
    found = {first_tensor(o).grad_fn for m, _, o in ran.calls if isinstance(m, nn.RNNBase)}
    return found | {o.grad_fn for outs in step_calls(ran).values() for o in outs}


def data_leaves(ran: Here) -> dict[int, torch.Tensor]:
    """The script's data (run with ``DATA_NEEDS_GRAD``): its 3-d leaf tensors that need a gradient."""
    return {id(t): t for name, t in ran.namespace.items() if isinstance(t, torch.Tensor) and t.is_leaf
            and t.requires_grad and t.dim() == 3 and not name.startswith("_")}


def data_joins(ran: Here, op: str = "AddBackward0", after_recurrent: bool = True) -> bool:
    """An ``op`` node (a recurrent output behind it, with ``after_recurrent``) one of whose inputs
    is computed from the data alone (no parameter, no recurrent output behind that input), and a
    parameter behind it: with the data needing no gradient, the node is in the graph then only."""
    data, recurrent = data_leaves(ran), recurrent_fns(ran)

    def leaves(fn) -> list:
        return [f.variable for f in grad_fns(fn) if type(f).__name__ == "AccumulateGrad"]

    def data_alone(fn) -> bool:
        found = leaves(fn)
        return bool(found) and all(id(v) in data for v in found) and not grad_fns(fn) & recurrent

    return any(type(fn).__name__ == op and (not after_recurrent or grad_fns(fn) & recurrent)
               and any(id(v) not in data for v in leaves(fn))
               and any(nxt is not None and data_alone(nxt) for nxt, _ in fn.next_functions)
               for fn in grad_fns(ran.predictions))


def data_takers(ran: Here) -> list[set[int]]:
    """Torch's own walk: for each node that takes a data leaf, the time steps (dimension 1) it
    takes: a Select or Slice on dimension 1 takes its steps; anything else, all of them."""
    data = data_leaves(ran)
    taken: list[set[int]] = []
    for fn in grad_fns(ran.predictions):
        for nxt, _ in fn.next_functions:
            if type(nxt).__name__ != "AccumulateGrad" or id(nxt.variable) not in data:
                continue
            every = range(nxt.variable.shape[1])
            name = type(fn).__name__
            if name == "SelectBackward0" and fn._saved_dim == 1:
                index = (fn._saved_index + 2**63) % 2**64 - 2**63  # saved unsigned: -1 is 2**64 - 1
                taken.append({every[index]})
            elif name == "SliceBackward0" and fn._saved_dim == 1:
                taken.append(set(every[fn._saved_start:fn._saved_end:fn._saved_step]))
            else:
                taken.append(set(every))
    return taken


def data_steps(ran: Here) -> set[int]:
    """The data's time steps ``predictions``' graph reaches (``data_takers``, together)."""
    return set().union(*data_takers(ran))


def every_step_weighted(ran: Here) -> bool:
    """A softmax behind ``predictions``, and a gradient at every time step of nn.RNN's output."""
    if "SoftmaxBackward0" not in ops_by_type(ran.predictions):
        return False
    for module, _, output in ran.calls:
        out = first_tensor(output)
        if isinstance(module, nn.RNNBase) and out.grad_fn in grad_fns(ran.predictions):
            (grad,) = torch.autograd.grad(ran.predictions.sum(), out, retain_graph=True, allow_unused=True)
            if grad is not None and all(grad[:, t].abs().sum() > 0 for t in range(out.shape[1])):
                return True
    return False
