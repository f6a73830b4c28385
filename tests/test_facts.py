"""Each fact of the vocabulary, on programs that make it true and programs that make it false,
each run in the real sandbox, and each checked against torch's own grad_fn walk of the same
program run here (``harness.torch_walk``; for facts about the data, with the data made to need
a gradient, so torch's graph reaches it). Then the rules: one graph, one verdict; the data is
the script's named data, never a constant.
"""

from __future__ import annotations

import pytest

from harness import torch_walk as torch_side
from harness.autograd import grad_fns, ops_by_type
from harness.challenge_programs import LOOP, LOOP_HEAD, OUT, RETURN, RUN, SEED, STEP, edit, script
from stockdemo.code.edits import EDITS, apply
from stockdemo.lessons import parse_check
from stockdemo.lessons.checks import leaves
from stockdemo.lessons.facts import op_names
from stockdemo.lessons.variants import with_longer_sequences
from stockdemo.sandbox import run_code

DETACH, ATTENTION = apply(EDITS["detach"]), apply(EDITS["attention"])
NO_GRAD = edit(SEED, (RUN, "with torch.no_grad():\n    " + RUN))
SYNTAX = edit(SEED, (RETURN, "        return self.fc(out[:, -1, :]\n"))
PLUS_ONE = edit(SEED, (OUT, OUT + "        out = out + 1.0\n"))
ONES = edit(SEED, (OUT, OUT + "        out = out + torch.ones(1, 1, 1)\n"))
MEAN = edit(SEED, (OUT, OUT + "        out = out + x.mean(dim=2, keepdim=True)\n"))
FLIPPED = edit(SEED, (OUT, OUT + "        out = out + x.flip(1)[:, :, :1]\n"))
BEFORE_RNN = edit(SEED, (OUT, "        x = x + x[:, :, :1]\n" + OUT))
OWN_LINE = edit(LOOP, (STEP, "            h = h.detach()\n" + STEP))
TWO_LAYERS = edit(SEED, ("num_layers=1", "num_layers=2"))
LSTM = edit(SEED, ("rnn=nn.RNN", "rnn=nn.LSTM"))
OUT_DETACHED = edit(SEED, (OUT, OUT + "        out = out.detach()\n"))
BY_BATCH = edit(LOOP, (STEP, "            h = self.cell(x[t], h)\n"))
BOTH_BRANCHES = edit(SEED, (RETURN, "        last = out[:, -1, :]\n        if last.mean() > 0:\n"
                                    "            last = last * 2\n        else:\n"
                                    "            last = last * 3\n        return self.fc(last)\n"))
UNSQUEEZED = edit(SEED, (RUN, "predictions = model(input_data).unsqueeze(0)\n"))
GATE = edit(SEED, (RETURN, "        last = out[:, -1, :]\n"
                           "        return self.fc(last * torch.softmax(last, dim=1))\n"))
FC = "        self.fc = nn.Linear(hidden_dim, output_dim)\n"
SCORES = edit(SEED, (FC, FC + "        self.score = nn.Linear(hidden_dim, 1)\n"),
              (RETURN, "        w = torch.softmax(self.score(out), dim=1)\n"
                       "        return self.fc((w * out).sum(dim=1))\n"))
PRINT_BEFORE = edit(LOOP, (STEP, "            print('step', t)\n" + STEP))
HALF_LOOP = edit(LOOP, (LOOP_HEAD, "        for t in range(2, x.shape[1]):\n"))

# (the fact's table, whether it holds, a label, the program). Two true and two false at least each.
CASES: list[tuple[dict, bool, str, str]] = [
    ({"fact": "draws"}, True, "seed", SEED),
    ({"fact": "draws"}, True, "detach", DETACH),
    ({"fact": "draws"}, False, "under no_grad", NO_GRAD),
    ({"fact": "draws"}, False, "a syntax error", SYNTAX),
    ({"fact": "op", "op": "CopySlices"}, True, "in place", apply(EDITS["inplace"])),
    ({"fact": "op", "op": "CopySlices"}, True, "last step zeroed",
     edit(SEED, (OUT, OUT + "        out[:, -1, :] = 0.0\n"))),
    ({"fact": "op", "op": "CopySlices"}, False, "seed", SEED),
    ({"fact": "op", "op": "CopySlices"}, False, "a write into the input",
     edit(SEED, (OUT, "        x[:, 0, :] = 0.0\n" + OUT))),
    ({"fact": "op", "op": "Addmm", "after": "Softmax"}, True, "attention", ATTENTION),
    ({"fact": "op", "op": "Addmm", "after": "Softmax"}, True, "learned scores", SCORES),
    ({"fact": "op", "op": "Addmm", "after": "Softmax"}, False, "seed", SEED),
    ({"fact": "op", "op": "Addmm", "after": "Softmax"}, False, "a softmax gate after the head", edit(
        SEED, (RETURN, "        return torch.softmax(self.fc(out[:, -1, :]), dim=0)\n"))),
    ({"fact": "op", "op": "Add", "data": True}, True, "skip", apply(EDITS["skip"])),
    ({"fact": "op", "op": "Add", "data": True}, True, "the mean of the features", MEAN),
    ({"fact": "op", "op": "Add", "data": True}, True, "the input flipped in time", FLIPPED),
    ({"fact": "op", "op": "Add", "data": True}, False, "+ 1.0", PLUS_ONE),
    ({"fact": "op", "op": "Add", "data": True}, False, "+ ones made in forward", ONES),
    ({"fact": "op", "op": "Add", "data": True}, False, "added before the RNN, outside autograd", BEFORE_RNN),
    ({"fact": "count", "op": "Tanh", "equals": 5}, True, "seed", SEED),
    ({"fact": "count", "op": "Tanh", "equals": 5}, True, "the loop", LOOP),
    ({"fact": "count", "op": "Tanh", "equals": 5}, False, "detach", DETACH),
    ({"fact": "count", "op": "Tanh", "equals": 5}, False, "two layers", TWO_LAYERS),
    ({"fact": "count", "op": "Tanh", "at_most": 1}, True, "detach", DETACH),
    ({"fact": "count", "op": "Tanh", "at_most": 1}, True, "an LSTM, fused", LSTM),
    ({"fact": "count", "op": "Tanh", "at_most": 1}, False, "seed", SEED),
    ({"fact": "count", "op": "Addmm", "at_least": 6}, True, "seed", SEED),
    ({"fact": "count", "op": "Addmm", "at_least": 6}, False, "detach", DETACH),
    ({"fact": "path", "step": 2}, True, "the loop", LOOP),
    ({"fact": "path", "step": 2}, True, "seed", SEED),
    ({"fact": "path", "step": 2}, False, "detach", DETACH),
    ({"fact": "path", "step": 2}, False, "nn.RNN's output detached", OUT_DETACHED),
    ({"fact": "path", "step": 0}, False, "the loop from step 2", HALF_LOOP),
    ({"fact": "path", "step": -1}, True, "the loop from step 2", HALF_LOOP),
    ({"fact": "one_step_at_a_time"}, True, "the loop", LOOP),
    ({"fact": "one_step_at_a_time"}, True, "a print in the loop", apply(EDITS["print"])),
    ({"fact": "one_step_at_a_time"}, False, "seed", SEED),
    ({"fact": "one_step_at_a_time"}, False, "detach: one step left", DETACH),
    ({"fact": "one_step_at_a_time"}, False, "indexed by the batch", BY_BATCH),
    ({"fact": "weighs_steps"}, True, "attention", ATTENTION),
    ({"fact": "weighs_steps"}, True, "learned scores", SCORES),
    ({"fact": "weighs_steps"}, False, "seed", SEED),
    ({"fact": "weighs_steps"}, False, "a softmax gate on the last step", GATE),
    ({"fact": "output_shape", "shape": [10, 1]}, True, "seed", SEED),
    ({"fact": "output_shape", "shape": [10, 1]}, True, "the loop", LOOP),
    ({"fact": "output_shape", "shape": [10, 1]}, False, "unsqueezed", UNSQUEEZED),
    ({"fact": "output_shape", "shape": [10, 1]}, False, "a script of its own",
     script("    h = cell(x[:, t], h)\n")),
    ({"fact": "reference_shape"}, True, "detach", DETACH),
    ({"fact": "reference_shape"}, True, "detach on its own line", OWN_LINE),
    ({"fact": "reference_shape"}, False, "the loop", LOOP),
    ({"fact": "reference_shape"}, False, "seed", SEED),
    ({"fact": "grows", "op": "Tanh"}, True, "seed", SEED),
    ({"fact": "grows", "op": "Tanh"}, True, "the loop", LOOP),
    ({"fact": "grows", "op": "Tanh"}, False, "detach", DETACH),
    ({"fact": "grows", "op": "Tanh"}, False, "an LSTM, fused", LSTM),
    ({"fact": "changes_with_data", "what": "Relu"}, True, "if on the data", apply(EDITS["if"])),
    ({"fact": "changes_with_data", "what": "Relu"}, True, "relu in the loop", edit(
        LOOP, (STEP, STEP + "            if h.mean() > 0:\n                h = torch.relu(h)\n"))),
    ({"fact": "changes_with_data", "what": "Relu"}, False, "seed", SEED),
    ({"fact": "changes_with_data", "what": "Relu"}, False, "both branches, no relu", BOTH_BRANCHES),
    ({"fact": "changes_with_data", "what": "graph"}, True, "if on the data", apply(EDITS["if"])),
    ({"fact": "changes_with_data", "what": "graph"}, False, "seed", SEED),
    ({"fact": "changes_with_data", "what": "steps"}, True, "while on the data", apply(EDITS["while"])),
    ({"fact": "changes_with_data", "what": "steps"}, False, "the loop", LOOP),
    ({"fact": "prints_every_step"}, True, "a print in the loop", apply(EDITS["print"])),
    ({"fact": "prints_every_step"}, True, "a print before the step", PRINT_BEFORE),
    ({"fact": "prints_every_step"}, False, "the loop", LOOP),
    ({"fact": "prints_every_step"}, False, "seed, one print", SEED),
]


def torch_fact(table: dict, source: str) -> bool:
    """What torch's own walk says of the fact ``table`` on ``source`` run here."""
    fact = table["fact"]
    if fact == "changes_with_data":
        what = table["what"]
        measure = {"graph": torch_side.signature,
                   "steps": lambda r: max(torch_side.loop_steps(r), torch_side.rnn_steps(r))}.get(
            what, lambda r: sum(ops_by_type(r.predictions).get(n, 0) for n in op_names(what)))
        return torch_side.by_seed(source, measure)
    ran = torch_side.here(torch_side.DATA_NEEDS_GRAD + source)
    if not torch_side.draws(ran):
        return False
    ops = ops_by_type(ran.predictions)
    names = op_names(table["op"]) if "op" in table else frozenset()
    count = sum(ops.get(n, 0) for n in names)
    steps = torch_side.data_takers(ran)
    if fact == "draws":
        return True
    if fact == "op" and table.get("data"):
        return any(torch_side.data_joins(ran, n, after_recurrent=False) for n in names)
    if fact == "op" and "after" in table:
        after = op_names(table["after"])
        return any(type(fn).__name__ in names
                   and any(type(b).__name__ in after for b in grad_fns(fn) - {fn})
                   for fn in grad_fns(ran.predictions))
    if fact == "op":
        return count > 0
    if fact == "count":
        how = next(h for h in ("equals", "at_least", "at_most") if h in table)
        return {"equals": count == table[how], "at_least": count >= table[how],
                "at_most": count <= table[how]}[how]
    if fact == "path":
        length = next(t.shape[1] for t in ran.namespace.values() if getattr(t, "dim", lambda: 0)() == 3)
        return table["step"] % length in set().union(*steps)
    if fact == "one_step_at_a_time":
        return bool(steps) and all(len(s) == 1 for s in steps) and len(set().union(*steps)) > 1
    if fact == "weighs_steps":
        return torch_side.every_step_weighted(torch_side.here(source))
    if fact == "output_shape":
        return list(ran.predictions.shape) == table["shape"]
    if fact == "reference_shape":
        return torch_side.signature(torch_side.here(source)) == torch_side.signature(torch_side.here(DETACH))
    if fact == "grows":
        longer = torch_side.here(with_longer_sequences(source))
        drew = torch_side.draws(longer)
        grown = sum(ops_by_type(longer.predictions).get(n, 0) for n in names) if drew else 0
        return grown > count
    if fact == "prints_every_step":
        return ran.prints >= len(set().union(*steps)) > 1
    raise AssertionError(fact)


def test_each_fact_has_two_programs_that_make_it_true_and_two_that_make_it_false():
    facts = {table["fact"] for table, *_ in CASES}
    assert facts == set(parse_check.__globals__["FACTS"])
    for fact in facts:
        marks = [holds for table, holds, *_ in CASES if table["fact"] == fact]
        assert marks.count(True) >= 2 and marks.count(False) >= 2, fact


@pytest.mark.parametrize("table, holds, label, source", CASES,
                         ids=[f"{t['fact']}: {lab}" for t, _, lab, _ in CASES])
def test_the_facts_verdict_is_the_programs_and_torchs_own_walk_agrees(table, holds, label, source):
    check = parse_check(table, reference=DETACH)
    verdict = check.verdict(source, run_code)
    assert verdict.passes == holds, verdict.reason
    assert bool(verdict.reason) != holds and verdict.sentence == leaves(check.test)[0].sentence()
    assert torch_fact(table, source) == holds
    negated = parse_check({"not": table}, reference=DETACH).verdict(source, run_code)
    drew = torch_side.draws(torch_side.here(source))
    assert negated.passes == (not holds) or not drew  # a run without a graph fails both
