"""Facts about change: the student's code run again, with longer sequences, other data, or
its prints counted (``variants``), and compared with its own run.

A variant's run that stops makes the fact fail with why (``stopped``). Each variant runs at
most once per verdict: the check's ``Context`` keeps what it ran.
"""

from __future__ import annotations

from dataclasses import dataclass

from stockdemo.i18n import N_, Message, later
from stockdemo.lessons.facts import Fact, Outcome
from stockdemo.lessons.record import Structure
from stockdemo.lessons.shape import shape_key
from stockdemo.lessons.variants import counting_prints, print_calls, with_longer_sequences, with_seed
from stockdemo.sandbox.protocol import CodeRun

SEEDS = (1, 2, 3, 4, 5)  # other random numbers tried, in order, after the code's own

# Why a run drew nothing: whole sentences, by whose run it was.
STOPPED: dict[str, tuple[str, str]] = {
    "own": (N_("Your code stopped on line {line}: {message}"), N_("Your code stopped: {message}")),
    "seed": (N_("With other random numbers (seed {seed}), your code stopped: {message}"),) * 2,
    "longer": (N_("With twice the time steps, your code stopped: {message}"),) * 2,
    "prints": (N_("Run again to count its prints, your code stopped: {message}"),) * 2,
    "reference": (N_("The reference answer stopped: {message}"),) * 2,
}
NO_GRAPH: dict[str, str] = {
    "own": N_("Your code ran, but `predictions` has no autograd graph behind it."),
    "seed": N_("With other random numbers (seed {seed}), your code ran, but `predictions` has no autograd "
            "graph behind it."),
    "longer": N_("With twice the time steps, your code ran, but `predictions` has no autograd graph "
                 "behind it."),
    "prints": N_("Run again to count its prints, your code ran, but `predictions` has no autograd graph "
              "behind it."),
    "reference": N_("The reference answer ran, but `predictions` has no autograd graph behind it."),
}
CHANGED_BY_PRINTS = N_("Counting the prints changed the graph: something printed also built nodes.")


def stopped(run: CodeRun, whose: str = "own", **words: object) -> Message | str:
    """Why a run drew no graph, a Message said where shown ("" if it drew one). The run's own
    message (Python's words) stays as written."""
    if not run.ok:
        with_line, without = STOPPED[whose]
        line = run.error.line if run.error is not None else None
        return later(with_line if line else without, line=line, message=run.message, **words)
    if run.graph is None or not Structure(run.graph).ops():
        return later(NO_GRAPH[whose], **words)
    return ""


@dataclass(frozen=True)
class Grows(Fact):
    op: str | None = None
    names: frozenset[str] = frozenset()
    runs_again = True

    @property
    def key(self) -> str:
        return "grows op" if self.op else "grows"

    def words(self) -> dict[str, object]:
        return {"op": self.op}

    def measure(self, graph: Structure) -> int:
        return sum(graph.ops()[n] for n in self.names) if self.op else len(graph)

    def judge(self, ask) -> Outcome:
        longer = ask.again(with_longer_sequences(ask.source))
        if why := stopped(longer, "longer"):
            return Outcome(False, why)
        short, long = self.measure(ask.graph), self.measure(Structure(longer.graph))
        return self.outcome(long > short, short=short, long=long)


@dataclass(frozen=True)
class ChangesWithData(Fact):
    what: str  # "graph", "steps" or an op
    names: frozenset[str] = frozenset()
    runs_again = True

    @property
    def key(self) -> str:
        return f"changes_with_data {self.what if self.what in ('graph', 'steps') else 'op'}"

    def words(self) -> dict[str, object]:
        return {"op": self.what}

    def measure(self, record: dict) -> object:
        if self.what == "graph":
            return shape_key(record)
        graph = Structure(record)
        return len(graph.steps_taken()) if self.what == "steps" else sum(graph.ops()[n] for n in self.names)

    def judge(self, ask) -> Outcome:
        mine = self.measure(ask.own.graph)
        for k in SEEDS:
            other = ask.again(with_seed(ask.source, k))
            if why := stopped(other, "seed", seed=k):
                return Outcome(False, why)
            if self.measure(other.graph) != mine:
                return self.outcome(True)
        return self.outcome(False, tries=len(SEEDS) + 1, found=mine)


@dataclass(frozen=True)
class PrintsEveryStep(Fact):
    key = "prints_every_step"
    runs_again = True

    def judge(self, ask) -> Outcome:
        steps = len(ask.graph.steps_taken())
        marked = ask.again(counting_prints(ask.source))
        if why := stopped(marked, "prints"):
            return Outcome(False, why)
        calls = print_calls(marked.printed)
        if shape_key(marked.graph) != ask.key:
            return Outcome(False, later(CHANGED_BY_PRINTS))
        return self.outcome(steps > 1 and calls >= steps, calls=calls, steps=steps)
