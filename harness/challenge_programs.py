"""Programs a class writes for each built-in challenge, each marked with the verdict it must get.

Variations a class really writes: the fix on other lines, with other names, a partial fix, an
unrelated change, an error. ``PROGRAMS`` maps a challenge (a ready-made edit's name,
``"grows"`` for the seed's first claim, ``"prompt"``) to ``(label, passes, source)``;
``CASES`` flattens it. Shared by the checks' tests and the same-graph-same-verdict test, with
``shuffled`` (a run's record with its nodes in another order: the same graph).
"""

from __future__ import annotations

import random

from stockdemo.classroom.challenges import PROMPT
from stockdemo.code.edits import EDITS, apply, seed_source

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
        ("a constant added: 1.0 is not the data", False,
         edit(SEED, (OUT, OUT + "        out = out + 1.0\n"))),
        ("a tensor of ones made in forward", False,
         edit(SEED, (OUT, OUT + "        out = out + torch.ones(1, 1, 1)\n"))),
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
        ("the early steps under no_grad, the last after the loop", True, edit(LOOP, (LOOP_HEAD + STEP, (
            "        with torch.no_grad():\n"
            "            for t in range(x.shape[1] - 1):\n"
            "                h = self.cell(x[:, t], h)\n"
            "        h = self.cell(x[:, -1], h)\n")))),
        ("the early steps detached in place, the last after the loop", True, edit(LOOP, (LOOP_HEAD + STEP, (
            "        for t in range(x.shape[1] - 1):\n"
            "            h = self.cell(x[:, t], h)\n"
            "            h.detach_()\n"
            "        h = self.cell(x[:, -1], h)\n")))),
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
CASES = [(name, label, source, passes) for name, programs in PROGRAMS.items()
         for label, passes, source in programs]


def shuffled(record: dict, seed: int) -> dict:
    """``record`` with its nodes in another order and its edges reversed: the same graph."""
    order = list(range(len(record["nodes"])))
    random.Random(seed).shuffle(order)
    where = {old: new for new, old in enumerate(order)}
    return {**record, "nodes": [record["nodes"][old] for old in order],
            "edges": [[where[s], where[d]] for s, d in reversed(record["edges"])],
            "inputs": [{**i, "to": [where[d] for d in i["to"]]} for i in record.get("inputs", ())]}
