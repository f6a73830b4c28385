"""Learners' programs (tests/corpus/*.py, and a few written here) and one run of a program in this
process, as the sandbox runs it.

The sandbox's child (``stockdemo.sandbox.child.run_source``) seeds torch and ``random``
with 0, compiles the source as ``"<your code>"`` without this module's ``__future__``
flags, runs it in a fresh ``{"__name__": "__main__"}`` namespace with one torch thread,
in an empty folder of its own, stdout and stderr going to one stream. ``run_here`` does
the same, so what differs between the two is the sandbox, not the set-up.
"""

from __future__ import annotations

import contextlib
import io
import random
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from harness.autograd import ops_by_type
from harness.helpers import ROOT
from stockdemo.graph.recorder import CODE_FILE, LineRecorder

CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.py"))
SEED = 0  # stockdemo.sandbox.child.SEED


@dataclass(frozen=True)
class LocalRun:
    """What one program did here: its printed text, the warnings it raised, predictions' graph."""

    printed: str
    warnings: tuple[str, ...]
    shape: tuple[int, ...]
    ops_by_type: dict[str, int]
    optimizers: frozenset[str]  # the torch.optim classes whose step() it called
    backwards: tuple[dict[str, int], ...]  # ops by type of each graph a backward() or grad() freed


def run_here(source: str, folder: Path, recorder: bool = False) -> LocalRun:
    """Run ``source`` in this process in ``folder`` (empty) -> LocalRun. Raises what the program raises.

    ``recorder``: run it under ``LineRecorder`` for "<your code>", as the sandbox does.
    """
    printed = io.StringIO()
    backwards: list[dict[str, int]] = []
    stepped: set[str] = set()
    step_hook = register_optimizer_step_post_hook(
        lambda optimizer, args, kwargs: stepped.add(type(optimizer).__name__))
    namespace: dict = {"__name__": "__main__"}
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        torch.manual_seed(SEED)
        random.seed(SEED)
        code = compile(source, CODE_FILE, "exec", dont_inherit=True)
        with (contextlib.chdir(folder), contextlib.redirect_stdout(printed),
              contextlib.redirect_stderr(printed), warnings.catch_warnings(record=True) as caught):
            # A warning shows once per place in a process: the text would depend on what ran before.
            warnings.simplefilter("always")
            with each_backward(backwards), \
                    LineRecorder(is_callers=lambda filename: filename == CODE_FILE) if recorder \
                    else contextlib.nullcontext():
                exec(code, namespace)
        predictions = namespace["predictions"]
        return LocalRun(printed.getvalue(), tuple(f"{w.category.__name__}: {w.message}" for w in caught),
                        tuple(predictions.shape), ops_by_type(predictions), frozenset(stepped),
                        tuple(backwards))
    finally:
        step_hook.remove()
        torch.set_num_threads(threads)
        namespace.clear()


@contextlib.contextmanager
def each_backward(seen: list[dict[str, int]]) -> Iterator[None]:
    """While active: ``seen`` gets torch's own walk of each graph ``torch.autograd.backward``
    (``Tensor.backward`` calls it) or ``torch.autograd.grad`` is about to free, from the first
    tensor given that has a grad_fn."""
    backward, grad = torch.autograd.backward, torch.autograd.grad

    def note(tensors: object) -> None:
        for t in tensors if isinstance(tensors, tuple | list) else (tensors,):
            if isinstance(t, torch.Tensor) and t.grad_fn is not None:
                seen.append(ops_by_type(t))
                return

    def noting_backward(tensors, *args, **kwargs):
        note(tensors)
        return backward(tensors, *args, **kwargs)

    def noting_grad(outputs, *args, **kwargs):
        note(outputs)
        return grad(outputs, *args, **kwargs)

    torch.autograd.backward, torch.autograd.grad = noting_backward, noting_grad
    try:
        yield
    finally:
        torch.autograd.backward, torch.autograd.grad = backward, grad


def here(source: str) -> tuple[dict, BaseException | None, str]:
    """Run ``source`` in this process, as the sandbox would -> (namespace, what it raised, printed)."""
    namespace: dict = {"__name__": "__main__"}
    torch.manual_seed(0)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, "here", "exec"), namespace)
    except Exception as err:
        return namespace, err, printed.getvalue()
    return namespace, None, printed.getvalue()


# A shape mistake inside forward, after a print: torch's own error, on the learner's line.
SHAPE_ERROR = '''\
import torch
from torch import nn


class Broken(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)


print("before the error")
predictions = Broken()(torch.randn(10, 3))
'''


# A time loop written by hand, T 40, with a prediction at every step: over the layout's budget.
LONG_LOOP = """\
import torch
from torch import nn

cell = nn.RNNCell(3, 10)
fc = nn.Linear(10, 1)
torch.manual_seed(0)
x = torch.randn(10, 40, 3)
h = torch.zeros(10, 10)
outs = []
for t in range(x.shape[1]):
    h = cell(x[:, t], h)
    outs.append(fc(h))
predictions = torch.stack(outs, dim=1).mean(dim=1)
"""
