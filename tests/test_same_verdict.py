"""One graph, one verdict: runs that build the same graph (the gallery's ``shape_key``) get the same
verdict from every check that needs one run, whatever their code looks like. And "the data" is
what entered from the script's named data, never a constant.

The runs: the learners' corpus (tests/corpus/), every built-in challenge's programs
(``harness.challenge_programs``) and every shipped lesson's code. The checks: every built-in and
shipped check that needs one run, and facts made for each op the runs recorded (present, after
the recurrent part, taking the data, its count), each path, each output shape, each reference.
"""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.challenge_programs import CASES, LOOP, LOOP_HEAD, OUT, SEED, STEP, edit, shuffled
from harness.helpers import ROOT
from stockdemo.classroom.challenges import CHALLENGES, shape_key
from stockdemo.code.edits import EDITS, apply
from stockdemo.lessons import parse_check, shipped, shipped_lesson
from stockdemo.lessons.record import Structure
from stockdemo.sandbox import run_code

CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.py"))
LAST = "        h = self.cell(x[:, -1], h)\n"  # the one step left, written after the loop
NO_GRAD_DETACH = edit(LOOP, (LOOP_HEAD + STEP, "        with torch.no_grad():\n"
                             "            for t in range(x.shape[1] - 1):\n"
                             "                h = self.cell(x[:, t], h)\n" + LAST))
IN_PLACE_DETACH = edit(LOOP, (LOOP_HEAD + STEP, "        for t in range(x.shape[1] - 1):\n"
                              "            h = self.cell(x[:, t], h)\n            h.detach_()\n" + LAST))


def lesson_codes() -> list[str]:
    found = []
    for name in shipped():
        for step in shipped_lesson(name).steps:
            found += [getattr(step.settings, "source", None)]
            if step.challenge is not None:
                found += [step.challenge.start, step.challenge.answer]
    return [s for s in found if s]


@pytest.fixture(scope="module")
def runs() -> dict[str, object]:
    """Every program's run in the sandbox, by its text: those that drew a graph."""
    sources = list(dict.fromkeys([*(p.read_text(encoding="utf-8") for p in CORPUS), *(c[2] for c in CASES),
                                  *lesson_codes(), NO_GRAD_DETACH, IN_PLACE_DETACH]))
    with ThreadPoolExecutor(2) as pool:
        made = dict(zip(sources, pool.map(run_code, sources), strict=True))
    return {source: ran for source, ran in made.items() if ran.ok and ran.graph is not None}


def one_run_checks(runs: dict) -> list:
    """Every check that needs one run: the built-in and shipped ones, and facts made for what ran."""
    checks = [c.check for c in CHALLENGES.values()]
    checks += [c.check for n in shipped() for c in shipped_lesson(n).challenges().values()]
    ops: dict[str, int] = {}
    shapes = set()
    for ran in runs.values():
        graph = Structure(ran.graph)
        for op, count in graph.ops().items():
            ops.setdefault(op, count)
        shapes.add(tuple(graph.output_shape))
    for op, count in sorted(ops.items()):
        for extra in ({}, {"after": "recurrent"}, {"data": True}, {"after": "recurrent", "data": True}):
            checks.append(parse_check({"fact": "op", "op": op, **extra}))
        checks.append(parse_check({"fact": "count", "op": op, "equals": count}))
    checks += [parse_check({"fact": "path", "step": k}) for k in (0, 1, 2, -1, -2)]
    checks += [parse_check({"fact": f}) for f in ("one_step_at_a_time", "weighs_steps", "draws")]
    checks += [parse_check({"fact": "output_shape", "shape": list(s)}) for s in sorted(shapes)[:20]]
    checks += [parse_check({"fact": "reference_shape"}, reference=r) for r in (SEED, apply(EDITS["detach"]))]
    return [c for c in checks if not c.runs_again]


def test_runs_that_build_one_graph_get_one_verdict_from_every_one_run_check(runs):
    groups: dict[str, list[str]] = defaultdict(list)
    for source, ran in runs.items():
        groups[shape_key(ran.graph)].append(source)
    shared = [sources for sources in groups.values() if len(sources) > 1]
    detach = apply(EDITS["detach"])
    assert len(runs) >= 100 and len(shared) >= 10
    assert {detach, NO_GRAD_DETACH, IN_PLACE_DETACH} <= set(groups[shape_key(runs[detach].graph)])
    checks = one_run_checks(runs)
    assert len(checks) >= 250
    for check in checks:
        for sources in shared:
            verdicts = {check.verdict(s, run_code, first=runs[s]) for s in sources}
            assert len({(v.passes, v.reason) for v in verdicts}) == 1, (check.sentence, sources[0][-300:])


def test_the_detach_challenge_passes_the_no_grad_and_in_place_solutions_as_it_passes_the_edit(runs):
    check = CHALLENGES["detach"].check
    for source in (apply(EDITS["detach"]), NO_GRAD_DETACH, IN_PLACE_DETACH):
        assert check.verdict(source, run_code, first=runs[source]).passes


def test_a_verdict_does_not_depend_on_the_order_of_the_records_nodes(runs):
    checks = [c.check for c in CHALLENGES.values() if not c.check.runs_again]
    for source, ran in list(runs.items())[::3]:
        other = type(ran)(limits=ran.limits, graph=shuffled(ran.graph, len(source)))
        assert shape_key(other.graph) == shape_key(ran.graph)
        for check in checks:
            assert check.verdict(source, run_code, first=other) == check.verdict(source, run_code, first=ran)


def test_the_data_is_what_entered_from_the_scripts_named_data_never_a_constant():
    skip, plus_one, ones = (run_code(s).graph for s in (
        apply(EDITS["skip"]), edit(SEED, (OUT, OUT + "        out = out + 1.0\n")),
        edit(SEED, (OUT, OUT + "        out = out + torch.ones(1, 1, 1)\n"))))
    adds = [{i for i in Structure(r).op_nodes("AddBackward0")} for r in (skip, plus_one, ones)]
    data = [Structure(r).data_nodes() for r in (skip, plus_one, ones)]
    assert adds[0] & data[0] and not adds[1] & data[1] and not adds[2] & data[2]
    assert all(len(d) == 1 for d in data[1:])  # the data enters nn.RNN's input projection alone
    assert {i["name"] for r in (skip, plus_one, ones) for i in r["inputs"]} == {"input_data"}
    assert shape_key(skip) != shape_key(plus_one)  # the same ops and shapes; the data is part of the graph
