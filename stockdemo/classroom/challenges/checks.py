"""Checks on the graph: does a student's run build what the challenge asked for?

A ``Check`` is a sentence a student reads and a predicate over what their run recorded:
the autograd graph behind ``predictions`` (``graph.recorder.raw_graph``'s record), and for
questions about change, the graphs of the same code run again with other random numbers
or longer sequences (``variants``). Checks read structure only (ops, edges, paths, loop
iterations), never the code's text or its line numbers: ``h = h.detach()`` on line 14
or on line 15 gets the same verdict.

    verdict = CUT_AFTER_FIRST_STEP.verdict(source, run_code)
    verdict.passes, verdict.sentence, verdict.reason

The check is handed the function that runs code (``stockdemo.sandbox.run_code`` in the
app, anything with its signature in a test), so checking never decides where code runs.
Pass ``first=`` the run the student already made, and the code is not run again for it.

What each check runs beyond the student's own run (``Verdict.runs`` counts them):
``CHANGES_WITH_DATA`` and ``STEPS_FOLLOW_DATA`` up to five (other seeds, stopping at the
first that differs), ``GROWS_WITH_STEPS``, ``GRAPH_GROWS`` and ``PRINTS_EVERY_STEP`` one,
the others none. ``GRAPH_GROWS`` is the seed's first claim, which the seed itself passes:
for a prompt or the lesson, not a ready-made edit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stockdemo.classroom.challenges.shape import shape_key
from stockdemo.classroom.challenges.variants import (
    counting_prints,
    print_calls,
    with_longer_sequences,
    with_seed,
)
from stockdemo.graph.ids import graph_of_record
from stockdemo.sandbox.protocol import CodeRun

Runner = Callable[[str], CodeRun]  # source -> its run: stockdemo.sandbox.run_code
Record = dict[str, Any]  # graph.recorder.raw_graph's record: nodes, edges, files, texts, output_shape
SEEDS = (1, 2, 3, 4, 5)  # other random numbers tried, in order, after the code's own


@dataclass(frozen=True)
class Verdict:
    """A check's answer for one student's code."""

    passes: bool
    sentence: str  # what the check asks, as the student reads it
    reason: str = ""  # why it fails, in words ("" when it passes)
    runs: int = 0  # how many runs the check made (the student's own, if given, not counted)


# A predicate: (the code's own run, the code, a runner) -> None when it holds, else the reason.
Predicate = Callable[[CodeRun, str, Runner], "str | None"]


@dataclass(frozen=True)
class Check:
    """A predicate over a run's graph(s), with the sentence a student reads."""

    sentence: str
    holds: Predicate

    def verdict(self, source: str, run: Runner, first: CodeRun | None = None) -> Verdict:
        """Run ``source`` (or take ``first``, its run already made) and judge it. Never raises."""
        count = 0

        def counted(code: str) -> CodeRun:
            nonlocal count
            count += 1
            return run(code)

        try:
            own = first if first is not None else counted(source)
            reason = stopped(own) or self.holds(own, source, counted)
        except Exception as err:  # noqa: BLE001 - a run the check cannot read fails; it never stops a class
            reason = f"The check could not read this run ({type(err).__name__})."
        return Verdict(not reason, self.sentence, reason or "", count)


def check(sentence: str) -> Callable[[Predicate], Check]:
    """Declares a check: the sentence a student reads, over the predicate it decorates."""
    return lambda holds: Check(sentence, holds)


def stopped(run: CodeRun, how: str = "Your code") -> str:
    """Why a run drew no graph, in words ("" if it drew one)."""
    if not run.ok:
        where = f" on line {run.error.line}" if run.error.line and how == "Your code" else ""
        return f"{how} stopped{where}: {run.message}"
    if run.graph is None or not ops(run.graph):
        return f"{how} ran, but `predictions` has no autograd graph behind it."
    return ""


# --- what a record says, in graph terms -------------------------------------------------

def ops(record: Record) -> Counter:
    """Autograd's op name -> how many nodes of it (parameters and leaves left out)."""
    return Counter(n["op"] for n in record["nodes"] if n["kind"] == "op")


def inputs_of(record: Record) -> list[list[int]]:
    """Node i -> the nodes feeding it, one per input slot that needs a gradient."""
    inputs: list[list[int]] = [[] for _ in record["nodes"]]
    for src, dst in record["edges"]:
        inputs[dst].append(src)
    return inputs


def downstream(record: Record, sources: set[int]) -> set[int]:
    """Every node a path leads to from one of ``sources`` (the sources themselves only if
    another source leads to them)."""
    consumers: list[list[int]] = [[] for _ in record["nodes"]]
    for src, dst in record["edges"]:
        consumers[src].append(dst)
    seen: set[int] = set()
    todo = [d for s in sources for d in consumers[s]]
    while todo:
        j = todo.pop()
        if j not in seen:
            seen.add(j)
            todo.extend(consumers[j])
    return seen


def _loops(record: Record, hidden: bool) -> dict[str, tuple[set[int], set[int]]]:
    """Loop -> (its iterations that left nodes in the graph, the record's indices of those
    nodes). A loop around the whole graph with one iteration in it (training epochs: the
    graph drawn is the last one's) is no step of the model's, and is left out."""
    meta = graph_of_record(record).meta["code"]
    hidden_loops = set(meta["hidden_loops"])
    index = {node_id: i for i, node_id in enumerate(meta["ids"])}
    found: dict[str, tuple[set[int], set[int]]] = {}
    for node_id, per_node in meta["loops"].items():
        for loop, k in per_node:
            if hidden or loop not in hidden_loops:
                iterations, members = found.setdefault(loop, (set(), set()))
                iterations.add(k)
                members.add(index[node_id])
    ops_in_graph = sum(n["kind"] == "op" for n in record["nodes"])
    return {loop: (ks, members) for loop, (ks, members) in found.items()
            if len(ks) > 1 or len(members) < ops_in_graph}


def steps(record: Record, hidden: bool = True) -> dict[str, set[int]]:
    """Loop -> the iterations that left nodes in the graph.

    A loop is one of the code's own (``for``/``while``, seen by the recorder) or, with
    ``hidden``, one torch ran inside a line (nn.RNN's time steps, found by their repeated
    ops: ``graph.ids``). Keys are only names, unique within one record.
    """
    return {loop: ks for loop, (ks, _) in _loops(record, hidden).items()}


def step_nodes(record: Record) -> set[int]:
    """The record's indices of the nodes made inside a loop (the code's own or torch's)."""
    return {i for _, members in _loops(record, True).values() for i in members}


def recurrent_nodes(record: Record) -> set[int]:
    """The RNN's nodes: those made inside a loop, and a fused RNN's one node per layer
    (nn.LSTM on CPU records ``MkldnnRnnLayerBackward0``, whose steps run inside it)."""
    fused = {i for i, n in enumerate(record["nodes"])
             if n["kind"] == "op" and any(w in n["op"].lower() for w in ("rnn", "lstm", "gru"))}
    return step_nodes(record) | fused


def most_steps(record: Record, hidden: bool = True) -> int:
    """The iterations of the longest loop in the graph (0 without a loop)."""
    return max((len(ks) for ks in steps(record, hidden).values()), default=0)


# --- the checks ---------------------------------------------------------------------------

@check("Your code runs and draws a graph: `predictions` has autograd nodes "
       "behind it.")
def RUNS_AND_DRAWS(own: CodeRun, source: str, run: Runner) -> str | None:
    return None  # Check.verdict already failed a run without a graph


def _differs_with_data(own: CodeRun, source: str, run: Runner, measure) -> str | None:
    """Run the code under ``SEEDS`` in turn -> None at the first graph ``measure`` tells from
    the code's own, why a run stopped, or "" when every graph measured the same."""
    mine = measure(own.graph)
    for k in SEEDS:
        other = run(with_seed(source, k))
        if stopped(other):
            return stopped(other, f"With other random numbers (seed {k}), your code")
        if measure(other.graph) != mine:
            return None
    return ""


def _doubled(own: CodeRun, source: str, run: Runner,
             grew: Callable[[Record, Record], str | None]) -> str | None:
    """Run the code with twice the time steps -> why that run stopped, or what ``grew`` says of
    (the code's own graph, the longer run's)."""
    longer = run(with_longer_sequences(source))
    if stopped(longer):
        return stopped(longer, "With twice the time steps, your code")
    return grew(own.graph, longer.graph)


def _data_decides(own: CodeRun, source: str, run: Runner, measure: Callable[[dict], object],
                  same: str) -> str | None:
    """None when the data changes ``measure`` of the graph; else why not (``same``: what every
    input recorded alike)."""
    why = _differs_with_data(own, source, run, measure)
    return why if why != "" else f"{len(SEEDS) + 1} different inputs all recorded {same}"


@check("Two different inputs record two different graphs: the data picks "
       "which ops run.")
def CHANGES_WITH_DATA(own: CodeRun, source: str, run: Runner) -> str | None:
    return _data_decides(own, source, run, shape_key, "the same graph: nothing in the code decides "
                         "by the data which ops run.")


@check("The data decides how many steps run: two different inputs record "
       "different numbers of steps.")
def STEPS_FOLLOW_DATA(own: CodeRun, source: str, run: Runner) -> str | None:
    count = most_steps(own.graph)
    if not count:
        return "The graph has no steps: no loop of yours, and no nn.RNN, left nodes in it."
    return _data_decides(own, source, run, most_steps, f"{count} step{'s' * (count != 1)}: the number "
                         "of steps does not depend on the data.")


@check("An Add joins the RNN's output and the input: one AddBackward0 after the RNN, its "
       "other operand the data, which needs no gradient.")
def SKIP_ADD(own: CodeRun, source: str, run: Runner) -> str | None:
    record = own.graph
    inputs = inputs_of(record)
    rnn = recurrent_nodes(record)
    if not rnn:
        return "The graph has no RNN to skip past: no steps, and no fused RNN node."
    after_rnn = downstream(record, rnn)
    adds = [i for i in after_rnn if record["nodes"][i]["op"] == "AddBackward0"]
    if any(len(inputs[i]) == 1 for i in adds):
        return None
    if adds:
        return ("Every Add after the RNN adds two things that need a gradient: the input "
                "needs none, so adding it leaves one operand outside the graph.")
    return "No Add takes the RNN's output: the input does not join it anywhere."


@check("The graph stops growing after the detach: the last step still "
       "reaches the output, no path leads back to the first.")
def CUT_AFTER_FIRST_STEP(own: CodeRun, source: str, run: Runner) -> str | None:
    mine = steps(own.graph, hidden=False)
    if not mine:
        if steps(own.graph):
            return ("nn.RNN runs every step inside one call, all in the graph: write the loop "
                    "over time steps yourself to cut between steps.")
        return "No step of a loop reaches the output: the detach cut every step, the last one too."
    if any(0 not in ks for ks in mine.values()):
        return None
    return "The first time step still reaches the output: nothing cuts the path back to it."


@check("Writing into part of a tensor is recorded: the graph has a CopySlices node.")
def COPY_SLICES(own: CodeRun, source: str, run: Runner) -> str | None:
    if ops(own.graph)["CopySlices"]:
        return None
    return ("No CopySlices in the graph: nothing wrote into part of a tensor that needs a "
            "gradient (a write into the input, which needs none, records nothing).")


@check("Ordinary Python runs while the graph is recorded: your print ran at "
       "every step of your loop, and the graph has no node for it.")
def PRINTS_EVERY_STEP(own: CodeRun, source: str, run: Runner) -> str | None:
    count = most_steps(own.graph, hidden=False)
    if count < 2:
        return ("The graph has no loop of yours with several steps in it: print in a loop over "
                "the time steps.")
    marked = run(counting_prints(source))
    if stopped(marked):
        return stopped(marked, "Run again to count its prints, your code")
    calls = print_calls(marked.printed)
    if calls < count:
        return f"print ran {calls} time{'s' * (calls != 1)} for {count} steps of the loop."
    if shape_key(marked.graph) != shape_key(own.graph):
        return "Counting the prints changed the graph: something printed also built nodes."
    return None


@check("Your own loop records a block per time step: give it twice the steps "
       "and it runs more iterations, in a bigger graph.")
def GROWS_WITH_STEPS(own: CodeRun, source: str, run: Runner) -> str | None:
    short = most_steps(own.graph, hidden=False)

    def grew(mine: Record, longer: Record) -> str | None:
        if short < 2:
            if most_steps(mine):
                return "The graph has steps, but nn.RNN made them: no loop of yours records a step."
            return "The graph has no loop of yours with several steps in it."
        long = most_steps(longer, hidden=False)
        if long > short and len(longer["nodes"]) > len(mine["nodes"]):
            return None
        return (f"With twice the time steps your loop still left {long} iterations in the graph "
                f"(against {short}): it does not follow the sequence's length.")
    return _doubled(own, source, run, grew)


@check("The graph grows with the sequence: twice the time steps record a bigger "
       "graph, built again by this run.")
def GRAPH_GROWS(own: CodeRun, source: str, run: Runner) -> str | None:
    def grew(mine: Record, longer: Record) -> str | None:
        short, long = len(mine["nodes"]), len(longer["nodes"])
        return None if long > short else (
            f"Twice the time steps recorded {long} nodes, as many as before ({short}): the "
            "steps run inside one node (a fused nn.LSTM), or the steps are cut or fixed.")
    return _doubled(own, source, run, grew)


@check("Every time step reaches the prediction: a Softmax computed from the "
       "RNN weighs its whole output sequence.")
def SOFTMAX_OVER_STEPS(own: CodeRun, source: str, run: Runner) -> str | None:
    record = own.graph
    nodes = record["nodes"]
    from_steps = recurrent_nodes(record)
    from_steps |= downstream(record, from_steps)
    softmaxes = {i for i in from_steps if nodes[i]["op"] == "SoftmaxBackward0"}
    if not softmaxes:
        return "No Softmax computed from the RNN's outputs: nothing weighs the time steps."
    weighted = softmaxes | downstream(record, softmaxes)
    # The weights meet a whole sequence (batch, steps, features) that they did not make.
    for operands in inputs_of(record):
        if any(a in weighted for a in operands) and any(
                b not in weighted and b in from_steps and len(nodes[b]["shape"] or ()) >= 3
                for b in operands):
            return None
    return ("The Softmax's weights never meet the RNN's whole output sequence (batch, steps, "
            "features): only part of it reaches the prediction.")


