"""Challenges' checks, each against hand-written programs a class would write, and torch itself.

Every program runs in the real sandbox (``run_code``), and the check's verdict must be the
one written beside it. The same program also runs here, in this process, and the fact the
check claims is computed from the real tensors (``harness.torch_walk``: a walk of
``grad_fn.next_functions``, ``torch.autograd.grad``, forward hooks on the modules, the data
made to need a gradient): the verdict must agree with it. The programs are
``harness.challenge_programs``'s.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.autograd import ops_by_type
from harness.challenge_programs import (
    CASES,
    INPUT,
    LOOP,
    OUT,
    PROGRAMS,
    RETURN,
    RNN_INIT,
    SEED,
    STEP,
    edit,
    shuffled,
)
from harness.torch_walk import (
    DATA_NEEDS_GRAD,
    by_seed,
    data_joins,
    data_leaves,
    data_steps,
    draws,
    every_step_weighted,
    here,
    loop_steps,
    rnn_steps,
    signature,
)
from stockdemo.classroom.challenges import (
    CHALLENGES,
    GRAPH_GROWS,
    PROMPT,
    Challenge,
    difference,
    prompt_challenge,
    shape_key,
)
from stockdemo.code.edits import EDITS, apply
from stockdemo.lessons.variants import with_longer_sequences
from stockdemo.sandbox import run_code

CHECKS = {**{name: challenge.check for name, challenge in CHALLENGES.items()}, "grows": GRAPH_GROWS}


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
    if name in ("skip", "detach"):
        ran = here(DATA_NEEDS_GRAD + source)
        if not draws(ran):
            return False
        if name == "skip":
            return data_joins(ran)
        steps, last = data_steps(ran), max(t.shape[1] for t in data_leaves(ran).values()) - 1
        return last in steps and 0 not in steps
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
    verdict = CHALLENGES["skip"].check.verdict(SEED, run_code, first=broken)
    assert not verdict.passes and "could not read" in str(verdict.reason)


def test_a_runner_that_raises_fails_the_verdict_and_does_not_raise():
    def broken_runner(source: str):
        raise OSError("no sandbox here")

    verdict = CHALLENGES["if"].check.verdict(SEED, broken_runner)
    assert not verdict.passes and "OSError" in str(verdict.reason)


def test_an_error_is_the_reason_with_the_learners_line():
    source = edit(SEED, (RETURN, "        return self.fc(out[:, -1, :3])\n"))
    verdict = CHALLENGES["skip"].check.verdict(source, run_code)
    line = source.splitlines().index("        return self.fc(out[:, -1, :3])") + 1
    reason = str(verdict.reason)  # a Message, said in the language spoken here (English)
    assert not verdict.passes and f"line {line}" in reason and "RuntimeError" in reason


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
        assert shape_key(shuffled(record, seed)) == shape_key(record)
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
    skip = run_code(apply(EDITS["skip"])).graph
    assert [n.op for n in difference(skip, shuffled(student, 1)).removed_nodes] == ["AddBackward0"]


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
