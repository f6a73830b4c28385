"""Challenges' checks, each against hand-written programs a class would write, and torch itself.

Every program runs in the real sandbox (``run_code``), and the check's verdict must be the
one written beside it. The same program also runs here, in this process, and the fact the
check claims is computed from the real tensors (a walk of ``grad_fn.next_functions``,
``torch.autograd.grad``, forward hooks on the modules): the verdict must agree with it.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest
import torch
from torch import nn

from harness.autograd import grad_fns, ops_by_type
from stockdemo.classroom.challenges import (
    CHALLENGES,
    GRAPH_GROWS,
    PROMPT,
    Challenge,
    difference,
    prompt_challenge,
    shape_key,
)
from stockdemo.classroom.challenges import checks as C
from stockdemo.classroom.challenges.checks import SEEDS
from stockdemo.classroom.challenges.variants import with_longer_sequences, with_seed
from stockdemo.code.edits import EDITS, apply, seed_source
from stockdemo.sandbox import run_code

SEED = seed_source()
RNN_INIT = "        self.rnn = rnn(input_dim, hidden_dim, num_layers, batch_first=True)\n"
FC_INIT = "        self.fc = nn.Linear(hidden_dim, output_dim)\n"
OUT = "        out, _ = self.rnn(x)\n"
RETURN = "        return self.fc(out[:, -1, :])  # only the last time step matters\n"
INPUT = "input_data = torch.randn(10, 5, 3)"
LOOP = apply(EDITS["loop"])
STEP = "            h = self.cell(x[:, t], h)\n"
LOOP_HEAD = "        for t in range(x.shape[1]):\n"
RUN = "predictions = model(input_data)  # shape (10, 1)\n"


def edit(source: str, *changes: tuple[str, str]) -> str:
    """``source`` with each (old, new) replaced; each old text must occur exactly once."""
    for old, new in changes:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def script(body: str, steps: int = 6) -> str:
    """A class-free script: an nn.RNNCell in the learner's own loop over ``steps`` time steps."""
    return ("import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\ncell = nn.RNNCell(3, 8)\n"
            f"head = nn.Linear(8, 1)\nx = torch.randn(4, {steps}, 3)\nh = torch.zeros(4, 8)\n"
            f"for t in range(x.shape[1]):\n{body}predictions = head(h)\n")


# Each check: (label, whether it passes, program). Variations a class really writes: the fix
# on other lines, with other names, a partial fix, an unrelated change, an error.
TRAIN = (RUN, "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
              "for epoch in range(3):\n"
              "    predictions = model(input_data)\n"
              "    loss = predictions.pow(2).mean()\n"
              "    optimizer.zero_grad()\n"
              "    loss.backward()\n"
              "    optimizer.step()\n")
GRU = ("nn.RNNCell(input_dim, hidden_dim)", "nn.GRUCell(input_dim, hidden_dim)")
LONG_INPUT = (INPUT, "input_data = torch.randn(10, 12, 3)")
PROGRAMS: dict[str, list[tuple[str, bool, str]]] = {
    "if": [
        ("the edit", True, apply(EDITS["if"])),
        ("sum of the last step, other names", True, edit(SEED, (RETURN, (
            "        y = out[:, -1, :]\n"
            "        if y.sum() > 0:\n"
            "            y = y * 2\n"
            "        return self.fc(y)\n")))),
        ("if/else on the input, two activations", True, edit(SEED, (OUT, OUT + (
            "        if x.mean() > 0:\n"
            "            out = torch.tanh(out)\n"
            "        else:\n"
            "            out = torch.sigmoid(out)\n")))),
        ("if on the predictions, in the script", True, edit(SEED, (RUN, RUN + (
            "if predictions.mean() > 0:\n"
            "    predictions = -predictions\n")))),
        ("relu inside the learner's loop", True, edit(LOOP, (STEP, STEP + (
            "            if h.mean() > 0:\n"
            "                h = torch.relu(h)\n")))),
        ("seed unchanged", False, SEED),
        ("if on the shape, not the data", False, edit(SEED, (RETURN, (
            "        last = out[:, -1, :]\n"
            "        if x.shape[1] > 3:\n"
            "            last = torch.relu(last)\n"
            "        return self.fc(last)\n")))),
        ("both branches record the same ops", False, edit(SEED, (RETURN, (
            "        last = out[:, -1, :]\n"
            "        if last.mean() > 0:\n"
            "            last = last * 2\n"
            "        else:\n"
            "            last = last * 3\n"
            "        return self.fc(last)\n")))),
        ("if on the data that only prints", False, edit(SEED, (RUN, RUN + (
            "if predictions.mean() > 0:\n"
            "    print('up')\n")))),
        ("a typo in the condition", False,
         edit(apply(EDITS["if"]), ("if last.mean()", "if lst.mean()"))),
        ("an unrelated change: a skip", False, apply(EDITS["skip"])),
    ],
    "while": [
        ("the edit", True, apply(EDITS["while"])),
        ("for with a break on the norm", True, edit(LOOP, LONG_INPUT, (STEP, STEP + (
            "            if h.norm() > 4.0:\n"
            "                break\n")))),
        ("while on the mean, other names", True, edit(LOOP, LONG_INPUT, (LOOP_HEAD + STEP, (
            "        step = 0\n"
            "        while step < x.size(1) and h.abs().mean() < 0.35:\n"
            "            h = self.cell(x[:, step], h)\n"
            "            step += 1\n")))),
        ("nn.RNN over as many steps as the data says", True, edit(SEED, LONG_INPUT, (OUT, (
            "        n = int(x[0, 0, 0].abs() * 4) + 2\n"
            "        out, _ = self.rnn(x[:, :n])\n")))),
        ("a break in the script", True, script(
            "    h = cell(x[:, t], h)\n"
            "    if h.sum() > 1.5:\n"
            "        break\n", steps=10)),
        ("seed unchanged", False, SEED),
        ("the learner's loop, fixed length", False, LOOP),
        ("while on the counter only", False, edit(LOOP, (LOOP_HEAD + STEP, (
            "        t = 0\n"
            "        while t < x.shape[1]:\n"
            "            h = self.cell(x[:, t], h)\n"
            "            t += 1\n")))),
        ("a threshold the data never reaches", False,
         edit(apply(EDITS["while"]), ("h.norm() < 4.0", "h.norm() < 100.0"))),
        ("an if on the data, not the steps", False, apply(EDITS["if"])),
        ("a typo in the cell", False,
         edit(apply(EDITS["while"]), ("h = self.cell(x[:, t], h)", "h = self.cel(x[:, t], h)"))),
    ],
    "skip": [
        ("the edit", True, apply(EDITS["skip"])),
        ("in the return, input first", True, edit(SEED, (RETURN, (
            "        return self.fc(x[:, -1, :1] + out[:, -1, :])\n")))),
        ("other names, the mean of the features", True, edit(SEED, (OUT + RETURN, (
            "        seq, _ = self.rnn(x)\n"
            "        seq = seq + x.mean(dim=2, keepdim=True)\n"
            "        return self.fc(seq[:, -1, :])\n")))),
        ("past the RNN and the head", True, edit(SEED, (RETURN, (
            "        return self.fc(out[:, -1, :]) + x[:, -1, :1]\n")))),
        ("a residual at every step of the learner's loop", True, edit(LOOP, (STEP, (
            "            h = self.cell(x[:, t], h) + x[:, t, :1]\n")))),
        ("an LSTM, one fused node", True, edit(apply(EDITS["skip"]), ("rnn=nn.RNN", "rnn=nn.LSTM"))),
        ("seed unchanged", False, SEED),
        ("the output added to itself", False, edit(SEED, (OUT, OUT + "        out = out + out\n"))),
        ("a product, not a sum", False, edit(SEED, (OUT, OUT + "        out = out * x[:, :, :1]\n"))),
        ("the input through a layer of weights", False, edit(
            SEED, (FC_INIT, FC_INIT + "        self.proj = nn.Linear(3, 10)\n"),
            (OUT, OUT + "        out = out + self.proj(x)\n"))),
        ("added before the RNN", False, edit(SEED, (OUT, "        x = x + x[:, :, :1]\n" + OUT))),
        ("shapes that do not add", False, edit(SEED, (OUT, OUT + "        out = out + x\n"))),
    ],
    "detach": [
        ("the edit", True, apply(EDITS["detach"])),
        ("on its own line, before the step", True,
         edit(LOOP, (STEP, "            h = h.detach()\n" + STEP))),
        ("a GRU cell, other names", True, edit(LOOP, GRU, (STEP, (
            "            state = h.detach()\n"
            "            h = self.cell(x[:, t], state)\n")))),
        ("every third step (truncated backprop)", True, edit(LOOP, (STEP, (
            "            if t % 3 == 0:\n"
            "                h = h.detach()\n") + STEP))),
        ("in the script", True, script("    h = cell(x[:, t], h.detach())\n")),
        ("then trained for three epochs", True, edit(apply(EDITS["detach"]), TRAIN)),
        ("seed unchanged", False, SEED),
        ("the learner's loop, no detach", False, LOOP),
        ("no detach, trained for three epochs", False, edit(LOOP, TRAIN)),
        ("detached after the step: nothing left", False,
         edit(LOOP, (STEP, STEP + "            h = h.detach()\n"))),
        ("the input detached, not the state", False,
         edit(LOOP, (STEP, "            h = self.cell(x[:, t].detach(), h)\n"))),
        ("nn.RNN's output detached", False, edit(SEED, (OUT, OUT + "        out = out.detach()\n"))),
        ("a misspelt detach", False, edit(apply(EDITS["detach"]), ("h.detach()", "h.detatch()"))),
    ],
    "inplace": [
        ("the edit", True, apply(EDITS["inplace"])),
        ("the last step zeroed", True, edit(SEED, (OUT, OUT + "        out[:, -1, :] = 0.0\n"))),
        ("an in-place add into one feature", True,
         edit(SEED, (OUT, OUT + "        out[:, :, 0] += 1.0\n"))),
        ("one step copied into another, other names", True, edit(SEED, (OUT + RETURN, (
            "        seq, _ = self.rnn(x)\n"
            "        seq[:, 0] = seq[:, 1]\n"
            "        return self.fc(seq[:, -1, :])\n")))),
        ("into the predictions, in the script", True, edit(SEED, (RUN, RUN + "predictions[0] = 0.0\n"))),
        ("seed unchanged", False, SEED),
        ("a write into the input", False, edit(SEED, (OUT, "        x[:, 0, :] = 0.0\n" + OUT))),
        ("the same change, out of place", False, edit(SEED, (OUT, OUT + (
            "        out = torch.cat([torch.zeros_like(out[:, :1]), out[:, 1:]], dim=1)\n")))),
        ("in place on the whole tensor", False, edit(SEED, (OUT, OUT + "        out.mul_(2)\n"))),
        ("in place on a parameter", False,
         edit(SEED, (OUT, OUT + "        self.fc.weight[0, 0] = 0.0\n"))),
        ("an unrelated change: a skip", False, apply(EDITS["skip"])),
    ],
    "print": [
        ("the edit", True, apply(EDITS["print"])),
        ("before the step, other words", True, edit(LOOP, (STEP, "            print('step', t)\n" + STEP))),
        ("a value of the state", True, edit(LOOP, (STEP, STEP + "            print(h.mean().item())\n"))),
        ("a GRU cell, twice a step", True, edit(LOOP, GRU, (STEP, STEP + (
            "            print(t)\n"
            "            print(h.shape)\n")))),
        ("in the script", True, script(
            "    h = cell(x[:, t], h)\n"
            "    print(f'{t}: {h.norm():.2f}')\n")),
        ("seed unchanged", False, SEED),
        ("the learner's loop, no print", False, LOOP),
        ("one print after the loop", False, edit(LOOP, ("        return self.fc(h)", (
            "        print('done')\n"
            "        return self.fc(h)")))),
        ("a loop over nn.RNN's outputs, after the fact", False, edit(SEED, (OUT, OUT + (
            "        for t in range(out.shape[1]):\n"
            "            print(out[:, t].mean().item())\n")))),
        ("an f-string that does not parse", False,
         edit(apply(EDITS["print"]), ("{h.norm():.3f}", "{h.norm():.3f"))),
    ],
    "loop": [
        ("the edit", True, LOOP),
        ("the print edit", True, apply(EDITS["print"])),
        ("then trained for three epochs", True, edit(LOOP, TRAIN)),
        ("a GRU cell, other names", True, edit(LOOP, GRU, (LOOP_HEAD + STEP, (
            "        for step in x.unbind(1):\n"
            "            h = self.cell(step, h)\n")))),
        ("in the script", True, script("    h = cell(x[:, t], h)\n")),
        ("two cells a step", True, script(
            "    h = cell(x[:, t], h)\n"
            "    h = cell2(x[:, t], h)\n").replace("head = ", "cell2 = nn.RNNCell(3, 8)\nhead = ")),
        ("seed unchanged", False, SEED),
        ("a loop of fixed length", False, edit(LOOP, (LOOP_HEAD, "        for t in range(5):\n"))),
        ("the last three steps only", False, edit(LOOP, (LOOP_HEAD, (
            "        for t in range(x.shape[1] - 3, x.shape[1]):\n")))),
        ("detached at every step", False, apply(EDITS["detach"])),
        ("indexed by the batch, not the steps", False,
         edit(LOOP, (STEP, "            h = self.cell(x[t], h)\n"))),
    ],
    "attention": [
        ("the edit", True, apply(EDITS["attention"])),
        ("scores against the last step, other names", True, edit(SEED, (OUT + RETURN, (
            "        seq, _ = self.rnn(x)\n"
            "        w = torch.softmax(seq @ seq[:, -1, :].unsqueeze(2), dim=1)  # (B, T, 1)\n"
            "        return self.fc((w * seq).sum(1))\n")))),
        ("learned scores", True, edit(
            SEED, (FC_INIT, FC_INIT + "        self.score = nn.Linear(hidden_dim, 1)\n"),
            (RETURN, (
                "        w = torch.softmax(self.score(out), dim=1)\n"
                "        return self.fc((w * out).sum(dim=1))\n")))),
        ("bmm of the weights", True, edit(SEED, (RETURN, (
            "        a = out.mean(dim=2).softmax(dim=1)\n"
            "        summary = torch.bmm(a.unsqueeze(1), out).squeeze(1)\n"
            "        return self.fc(summary)\n")))),
        ("softmax of the outputs themselves", True, edit(SEED, (RETURN, (
            "        w = torch.softmax(out, dim=1)\n"
            "        return self.fc((w * out).sum(1))\n")))),
        ("a GRU", True, edit(apply(EDITS["attention"]), ("rnn=nn.RNN", "rnn=nn.GRU"))),
        ("an LSTM, one fused node", True, edit(apply(EDITS["attention"]), ("rnn=nn.RNN", "rnn=nn.LSTM"))),
        ("seed unchanged", False, SEED),
        ("the mean over steps, no softmax", False,
         edit(SEED, (RETURN, "        return self.fc(out.mean(dim=1))\n"))),
        ("a softmax gate on the last step", False, edit(SEED, (RETURN, (
            "        last = out[:, -1, :]\n"
            "        return self.fc(last * torch.softmax(last, dim=1))\n")))),
        ("a softmax on the prediction", False, edit(SEED, (RETURN, (
            "        return torch.softmax(self.fc(out[:, -1, :]), dim=0)\n")))),
        ("weights from the input, which needs no gradient", False, edit(SEED, (RETURN, (
            "        w = torch.softmax(x.sum(2), dim=1)\n"
            "        return self.fc((w.unsqueeze(2) * out).sum(1))\n")))),
        ("softmax without its dim", False,
         edit(apply(EDITS["attention"]), (", dim=1)  # (batch, T)", ")  # (batch, T)"))),
    ],
    "grows": [
        ("seed unchanged", True, SEED),
        ("a GRU", True, edit(SEED, ("rnn=nn.RNN", "rnn=nn.GRU"))),
        ("the learner's loop", True, LOOP),
        ("attention", True, apply(EDITS["attention"])),
        ("two layers", True, edit(SEED, ("num_layers=1", "num_layers=2"))),
        ("an LSTM, fused in one node", False, edit(SEED, ("rnn=nn.RNN", "rnn=nn.LSTM"))),
        ("detached at every step", False, apply(EDITS["detach"])),
        ("a loop of fixed length", False, edit(LOOP, (LOOP_HEAD, "        for t in range(5):\n"))),
        ("the input's last step, the RNN's output unused", False, edit(SEED, (RETURN, (
            "        return self.fc(x[:, -1, :].repeat(1, 4)[:, :10])\n")))),
        ("a shape error", False, edit(SEED, (RETURN, "        return self.fc(out[:, -1, :3])\n"))),
    ],
    PROMPT: [
        ("seed unchanged", True, SEED),
        ("the detach edit", True, apply(EDITS["detach"])),
        ("the attention edit", True, apply(EDITS["attention"])),
        ("a GRU instead", True, edit(SEED, ("rnn=nn.RNN", "rnn=nn.GRU"))),
        ("in the script", True, script("    h = cell(x[:, t], h)\n")),
        ("a syntax error", False, edit(SEED, (RETURN, "        return self.fc(out[:, -1, :]\n"))),
        ("a shape error", False, edit(SEED, (RETURN, "        return self.fc(out[:, -1, :3])\n"))),
        ("no predictions", False, edit(SEED, (RUN, "prediction = model(input_data)\n"),
                                       ("print(predictions)", "print(prediction)"))),
        ("under no_grad", False, edit(SEED, (RUN, "with torch.no_grad():\n    " + RUN))),
        ("predictions detached", False, edit(SEED, (RUN, "predictions = model(input_data).detach()\n"))),
    ],
}
CHECKS = {**{name: challenge.check for name, challenge in CHALLENGES.items()}, "grows": GRAPH_GROWS}
CASES = [(name, label, source, passes) for name, programs in PROGRAMS.items()
         for label, passes, source in programs]


# --- the same programs, run here, and what torch itself says ---------------------------------

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
    saved = (torch.manual_seed, torch.randn, torch.rand)
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
        torch.manual_seed, torch.randn, torch.rand = saved
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


def skip_add(ran: Here) -> bool:
    """An AddBackward0 with an operand that needs no gradient, and an RNN's output behind it."""
    recurrent = {first_tensor(o).grad_fn for m, _, o in ran.calls if isinstance(m, nn.RNNBase)}
    recurrent |= {o.grad_fn for outs in step_calls(ran).values() for o in outs}
    return any(type(fn).__name__ == "AddBackward0" and any(nxt is None for nxt, _ in fn.next_functions)
               and grad_fns(fn) & recurrent for fn in grad_fns(ran.predictions))


def first_step_cut(ran: Here) -> bool:
    """A looped module whose first call's output has no path to ``predictions``, and a later
    call's has."""
    behind = grad_fns(ran.predictions)
    return any(outs[0].grad_fn not in behind and any(o.grad_fn in behind for o in outs[1:])
               for outs in step_calls(ran).values())


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


def torch_says(name: str, source: str) -> bool:
    """The fact the check ``name`` claims, computed here from the real tensors."""
    if name == "if":
        return by_seed(source, signature)
    if name == "while":
        return by_seed(source, lambda ran: max(loop_steps(ran), rnn_steps(ran)))
    ran = here(source)
    if not draws(ran):
        return False
    if name == PROMPT:
        return True
    if name == "skip":
        return skip_add(ran)
    if name == "detach":
        return first_step_cut(ran)
    if name == "inplace":
        return "CopySlices" in ops_by_type(ran.predictions)
    if name == "print":
        return ran.prints >= loop_steps(ran) >= 2
    if name == "loop":
        longer = here(with_longer_sequences(source))
        return draws(longer) and loop_steps(longer) > loop_steps(ran) >= 2
    if name == "attention":
        return every_step_weighted(ran)
    if name == "grows":
        longer = here(with_longer_sequences(source))
        return draws(longer) and sum(ops_by_type(longer.predictions).values()) > sum(
            ops_by_type(ran.predictions).values())
    raise AssertionError(name)


@pytest.fixture(scope="module")
def verdicts() -> dict:
    """Every program's verdict from the real sandbox, two checks at a time; a text already
    run is not run again (the seed is in every check's list), as the class's queue does."""
    runs: dict = {}

    def once(source: str):
        if source not in runs:
            runs[source] = run_code(source)
        return runs[source]

    with ThreadPoolExecutor(2) as pool:
        futures = {(name, label): pool.submit(CHECKS[name].verdict, source, once)
                   for name, label, source, _ in CASES}
        return {key: future.result() for key, future in futures.items()}


def test_each_check_has_five_programs_that_pass_and_five_that_fail():
    for name in CHECKS:
        marks = Counter(passes for _, passes, _ in PROGRAMS[name])
        assert marks[True] >= 5 and marks[False] >= 5, name


@pytest.mark.parametrize("name, label, source, passes", CASES, ids=[f"{n}: {lab}" for n, lab, _, _ in CASES])
def test_the_checks_verdict_is_the_programs_and_torchs_own_walk_agrees(verdicts, name, label, source, passes):
    verdict = verdicts[name, label]
    assert verdict.passes == passes, verdict.reason
    assert verdict.sentence == CHECKS[name].sentence
    assert bool(verdict.reason) == (not passes)  # a failure always says why, a pass says nothing
    assert torch_says(name, source) == passes


# --- the challenges themselves ------------------------------------------------------------

def test_every_ready_made_edit_is_a_challenge_and_the_teacher_may_ask_in_words():
    assert set(CHALLENGES) == {*EDITS, PROMPT}
    for challenge in CHALLENGES.values():
        assert isinstance(challenge, Challenge) and challenge.start == SEED
        assert challenge.prompt and challenge.check.sentence
    asked = prompt_challenge("Show that the graph grows with T.", check=GRAPH_GROWS)
    assert asked.id == PROMPT and asked.check is GRAPH_GROWS and asked.start == SEED


def test_each_edit_passes_its_own_challenge_and_the_seed_passes_none():
    for name in EDITS:
        check = CHALLENGES[name].check
        assert check.verdict(apply(EDITS[name]), run_code).passes, name
        assert not check.verdict(SEED, run_code).passes, name


def test_the_students_own_run_is_not_run_again():
    ran: list[str] = []

    def runner(source: str):
        ran.append(source)
        return run_code(source)

    first = run_code(apply(EDITS["detach"]))
    verdict = CHALLENGES["detach"].check.verdict(apply(EDITS["detach"]), runner, first=first)
    assert verdict.passes and verdict.runs == 0 and ran == []
    verdict = CHALLENGES["loop"].check.verdict(LOOP, runner, first=run_code(LOOP))
    assert verdict.passes and verdict.runs == 1 and ran == [with_longer_sequences(LOOP)]


def test_a_check_given_a_record_it_cannot_read_fails_with_a_reason_and_does_not_raise():
    broken = run_code(SEED)
    broken = type(broken)(limits=broken.limits, graph={**broken.graph, "edges": [[0, 999]]})
    verdict = C.SKIP_ADD.verdict(SEED, run_code, first=broken)
    assert not verdict.passes and "could not read" in verdict.reason


def test_a_runner_that_raises_fails_the_verdict_and_does_not_raise():
    def broken_runner(source: str):
        raise OSError("no sandbox here")

    verdict = CHALLENGES["if"].check.verdict(SEED, broken_runner)
    assert not verdict.passes and "OSError" in verdict.reason


def test_an_error_is_the_reason_with_the_learners_line():
    source = edit(SEED, (RETURN, "        return self.fc(out[:, -1, :3])\n"))
    verdict = CHALLENGES["skip"].check.verdict(source, run_code)
    line = source.splitlines().index("        return self.fc(out[:, -1, :3])") + 1
    assert not verdict.passes and f"line {line}" in verdict.reason and "RuntimeError" in verdict.reason


# --- shape_key: one tile per graph ------------------------------------------------------------

SAME_SEED_OTHER_TEXT = (
    edit(SEED, ("class StockPredictor", "# my model\n\n\nclass StockPredictor"),
         (OUT + RETURN, "        seq, _ = self.recurrent(x)  # all steps\n"
                        "        last = seq[:, -1, :]\n"
                        "        return self.fc(last)\n"),
         (RNN_INIT, "        self.recurrent = rnn(input_dim, hidden_dim, num_layers, batch_first=True)\n"),
         ("input_data = torch", "prices = torch"), ("model = StockPredictor", "net = StockPredictor"),
         ("predictions = model(input_data)", "predictions = net(prices)")))


def test_the_same_graph_from_other_code_text_has_one_key():
    seed, other = run_code(SEED), run_code(SAME_SEED_OTHER_TEXT)
    assert seed.ok and other.ok, other.message
    assert [n["line"] for n in seed.graph["nodes"]] != [n["line"] for n in other.graph["nodes"]]
    assert shape_key(seed.graph) == shape_key(other.graph)
    on_its_own_line = run_code(edit(LOOP, (STEP, "            h = h.detach()\n" + STEP)))
    detach = run_code(apply(EDITS["detach"]))
    assert shape_key(on_its_own_line.graph) == shape_key(detach.graph)


def test_another_length_another_detach_or_a_skip_has_another_key():
    keys = [shape_key(run_code(source).graph) for source in (
        SEED, edit(SEED, (INPUT, "input_data = torch.randn(10, 6, 3)")), LOOP, apply(EDITS["detach"]),
        apply(EDITS["skip"]), apply(EDITS["attention"]), apply(EDITS["inplace"]))]
    assert len(set(keys)) == len(keys)


def test_the_key_ignores_the_order_of_the_records_nodes():
    record = run_code(apply(EDITS["attention"])).graph
    for seed in range(3):
        order = list(range(len(record["nodes"])))
        random.Random(seed).shuffle(order)
        where = {old: new for new, old in enumerate(order)}
        shuffled = {**record, "nodes": [record["nodes"][old] for old in order],
                    "edges": [[where[s], where[d]] for s, d in reversed(record["edges"])]}
        assert shape_key(shuffled) == shape_key(record)
    one_edge_fewer = {**record, "edges": record["edges"][:-1]}
    assert shape_key(one_edge_fewer) != shape_key(record)


def node(op: str) -> dict:
    return {"op": op, "kind": "op", "seq": 1, "shape": [2], "param": None, "file": None, "line": None,
            "loops": []}


def test_the_same_ops_wired_otherwise_have_another_key():
    ops = [node("MulBackward0"), node("AddBackward0"), node("TanhBackward0")]
    tanh_first = {"nodes": ops, "edges": [[2, 1], [1, 0]], "output_shape": [2]}
    add_first = {"nodes": ops, "edges": [[1, 2], [2, 0]], "output_shape": [2]}
    assert shape_key(tanh_first) != shape_key(add_first)


def test_a_parameters_shape_counts_and_its_name_does_not():
    wider = run_code(edit(SEED, ("hidden_dim=10", "hidden_dim=12")))
    assert shape_key(wider.graph) != shape_key(run_code(SEED).graph)
    renamed = run_code(SAME_SEED_OTHER_TEXT)
    assert {n["param"] for n in renamed.graph["nodes"]} != {n["param"] for n in run_code(SEED).graph["nodes"]}


@pytest.mark.parametrize("teacher, student", [
    (SEED, apply(EDITS["skip"])),
    (SEED, edit(SEED, (INPUT, "input_data = torch.randn(10, 6, 3)"))),
    (SEED, apply(EDITS["attention"])),
    (LOOP, apply(EDITS["detach"])),
], ids=["a skip", "one step more", "attention", "a detach"])
def test_the_difference_from_the_teachers_run_is_the_ops_torch_counts_in_one_and_not_the_other(
        teacher, student):
    diff = difference(run_code(teacher).graph, run_code(student).graph)
    before, after = (Counter(ops_by_type(here(source).predictions)) for source in (teacher, student))
    assert Counter(n.op for n in diff.added_nodes) == after - before
    assert Counter(n.op for n in diff.removed_nodes) == before - after
    assert diff.added_nodes or diff.removed_nodes


def test_the_skips_difference_is_one_add_its_two_edges_and_the_data_entering_it():
    teacher, student = run_code(SEED).graph, run_code(apply(EDITS["skip"])).graph
    diff = difference(teacher, student)
    (add,) = diff.added_nodes
    assert {d for s, d in diff.added_edges} == {add.id, *{d for s, d in diff.removed_edges}}
    assert len(diff.added_edges) == 3 and len(diff.removed_edges) == 1 and not diff.reshaped_nodes
    assert ("input/input_data", add.id) in diff.added_edges  # x[:, :, :1] jumps past the RNN


def test_the_same_graph_from_other_text_differs_in_nothing_whatever_the_node_order():
    teacher, student = run_code(SEED).graph, run_code(SAME_SEED_OTHER_TEXT).graph
    assert difference(teacher, student).is_empty
    order = list(range(len(student["nodes"])))
    random.Random(1).shuffle(order)
    where = {old: new for new, old in enumerate(order)}
    shuffled = {**student, "nodes": [student["nodes"][old] for old in order],
                "edges": [[where[s], where[d]] for s, d in student["edges"]],
                "inputs": [{**i, "to": [where[d] for d in i["to"]]} for i in student["inputs"]]}
    skip = run_code(apply(EDITS["skip"])).graph
    assert [n.op for n in difference(skip, shuffled).removed_nodes] == ["AddBackward0"]


def test_one_tile_can_hold_a_pass_and_a_fail_so_verdicts_are_counted_per_run():
    """The if edit takes the seed's own branch at seed 0: the same graph, another verdict."""
    seed, branch = run_code(SEED), run_code(apply(EDITS["if"]))
    assert shape_key(seed.graph) == shape_key(branch.graph)
    check = CHALLENGES["if"].check
    assert check.verdict(apply(EDITS["if"]), run_code, first=branch).passes
    assert not check.verdict(SEED, run_code, first=seed).passes


def test_a_class_of_sixty_writes_sixty_texts_and_each_placement_gets_the_verdict_it_expects():
    from harness.class_programs import PLACEMENTS, detach_programs

    programs = detach_programs(LOOP, 60)
    assert len({p.source for p in programs} | {LOOP}) == 61  # nothing the same as another, or the teacher's
    check = CHALLENGES["detach"].check
    for program in programs[:len(PLACEMENTS)]:
        assert check.verdict(program.source, run_code).passes == program.passes, program.source
    with pytest.raises(ValueError):
        detach_programs(SEED, 2)  # nn.RNN: no step of the learner's own to detach
