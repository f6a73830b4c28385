"""Ready-made edits of the seed's script, one lesson each, for the "Your code" page.

Each edit is a few replacements applied to the seed's own source (``seed_source``), so the
seed is written once (``stockdemo.sandbox.seed``, the Playground's own code) and each edit is what a learner
would type: the page shows it as a diff and runs it as it is.

    source = apply(EDITS["skip"])      # the seed with a skip connection
    diff = difflib.unified_diff(seed_source().splitlines(), source.splitlines())
"""

from __future__ import annotations

from dataclasses import dataclass

from stockdemo.i18n import N_
from stockdemo.sandbox.seed import SEED_CODE


@dataclass(frozen=True)
class Edit:
    name: str  # the key, e.g. "skip"
    title: str  # the picker's words (a msgid, said where shown): short, so all eight fit one row
    lesson: str  # one line (a msgid, said where shown): what to watch in the graph
    changes: tuple[tuple[str, str], ...]  # (text of the seed, what replaces it), in order


def seed_source() -> str:
    """The seed's script as the editor opens with it: the model, its input, its run."""
    return SEED_CODE


def apply(edit: Edit, source: str | None = None) -> str:
    """``source`` (the seed's by default) with ``edit``'s changes; each text must occur once."""
    text = seed_source() if source is None else source
    for old, new in edit.changes:
        if text.count(old) != 1:
            raise ValueError(f"edit {edit.name!r}: expected one {old.strip()!r} in the code, "
                             f"found {text.count(old)}")
        text = text.replace(old, new)
    return text


_RNN = "        self.rnn = rnn(input_dim, hidden_dim, num_layers, batch_first=True)\n"
_CELL = "        self.cell = nn.RNNCell(input_dim, hidden_dim)  # one time step; the loop is ours\n"
_OUT = "        out, _ = self.rnn(x)\n"
_RETURN = "        return self.fc(out[:, -1, :])  # only the last time step matters\n"
_H0 = "        h = x.new_zeros(x.shape[0], self.cell.hidden_size)\n"
_STEP = "            h = self.cell(x[:, t], h)\n"
_LOOP = ((_RNN, _CELL), (_OUT + _RETURN, _H0
                         + "        for t in range(x.shape[1]):\n" + _STEP
                         + "        return self.fc(h)  # the last step's hidden state\n"))

EDITS: dict[str, Edit] = {e.name: e for e in (
    Edit("if", N_("if on the data"),
         N_("The data picks the branch, so two inputs can record two different graphs."),
         ((_RETURN, "        last = out[:, -1, :]\n"
                    "        if last.mean() > 0:  # decided by this run's numbers\n"
                    "            last = torch.relu(last)\n"
                    "        return self.fc(last)\n"),)),
    Edit("while", N_("while on the data"),
         N_("The loop stops when the hidden state grows past a threshold: the data decides "
            "how many steps the graph has."),
         ((_RNN, _CELL),
          (_OUT + _RETURN, _H0 + "        t = 0\n"
                                 "        while t < x.shape[1] and h.norm() < 4.0:  # the data says when\n"
                                 "            h = self.cell(x[:, t], h)\n"
                                 "            t += 1\n"
                                 "        return self.fc(h)\n"),
          ("torch.randn(10, 5, 3)", "torch.randn(10, 12, 3)"))),
    Edit("skip", N_("skip connection"),
         N_("The input jumps past the RNN: the graph gains one Add node, and nothing else, "
            "because the input needs no gradient."),
         ((_OUT, _OUT + "        out = out + x[:, :, :1]  # skip connection: the input's first feature\n"),)),
    Edit("detach", ".detach()",
         N_("detach() cuts the graph: only the last step is left, so backward cannot reach "
            "the earlier ones."),
         (*_LOOP, (_STEP, "            h = self.cell(x[:, t], h.detach())  # cut the graph here\n"))),
    Edit("inplace", N_("in-place change"),
         N_("Writing into a tensor is recorded too (CopySlices): autograd tracks versions of "
            "what it saved."),
         ((_OUT, _OUT + "        out[:, 0, :] = 0.0  # an in-place write into the RNN's output\n"),)),
    Edit("print", N_("print in the loop"),
         N_("Ordinary Python runs while the graph is recorded: one printed line per step, and "
            "no node for the print."),
         (*_LOOP, (_STEP, _STEP + "            print(f\"t={t}  |h|={h.norm():.3f}\")\n"))),
    Edit("loop", N_("hand-written loop"),
         N_("Your own for loop over nn.RNNCell records one block per step, like nn.RNN's."),
         _LOOP),
    Edit("attention", N_("attention"),
         N_("Every step's output now reaches the prediction, through the softmax weights, "
            "not only the last one."),
         ((_RETURN, "        scores = torch.softmax((out * out[:, -1:, :]).sum(dim=2), dim=1)  # (batch, T)\n"
                    "        context = (scores.unsqueeze(2) * out).sum(dim=1)  # every step, weighted\n"
                    "        return self.fc(context)\n"),)),
)}
