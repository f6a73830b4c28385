"""The vocabulary of graph facts a check is made of: each one a sentence a student reads.

A fact is a table (a lesson's TOML, or Python data for the built-in challenges), named by
``fact`` and checked here (``parse_fact``): an op present (``op``: after the recurrent part,
taking the data), an op's count (``count``), a path from a time step of the data to the
output (``path``), the data entering one step at a time (``one_step_at_a_time``), a
softmax weighing the steps (``weighs_steps``), the output's shape (``output_shape``), the
reference answer's shape (``reference_shape``), and, run again, growth with the time steps
(``grows``), change with the data (``changes_with_data``) and a print per step
(``prints_every_step``). ``checks.py`` composes them with all, any and not.

A fact that needs one run reads only ``record.Structure``: what ``shape.shape_key`` hashes.
So one graph gets one verdict, whatever the code that built it looks like. "The data" is
what entered from the script's named data (``stockdemo.graph.data``), never a constant.

Every sentence is whole, with named placeholders, in ``WORDS`` (one table, for gettext).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from stockdemo.i18n import N_, Message, later
from stockdemo.i18n.deferred import Sentences, later_sentences
from stockdemo.lessons.record import Structure

TORCH_OPS = frozenset(n for n in dir(torch._C._functions) if not n.startswith("_"))  # autograd's own nodes
CUSTOM_OP = re.compile(r"[A-Za-z_][A-Za-z0-9_]*Backward")  # a torch.autograd.Function Cube: CubeBackward
MAX_STEP = 10_000  # |step| a path fact may name
MAX_COUNT = 100_000
MAX_SHAPE_DIMS = 8
RECURRENT = "recurrent"

# Fact key -> (the sentence when it holds, the sentence when it does not).
WORDS: dict[str, tuple[str, str]] = {
    "draws": (N_("Your code runs and draws a graph: `predictions` has autograd nodes behind it."),
              N_("`predictions` has no autograd graph behind it.")),
    "op": (N_("The graph has a {op} node."), N_("The graph has no {op} node.")),
    "op after recurrent": (N_("The graph has a {op} node after the recurrent part."),
                           N_("No {op} node comes after the recurrent part.")),
    "op after op": (N_("The graph has a {op} node after a {after} node."),
                    N_("No {op} node comes after a {after} node.")),
    "op data": (N_("The data enters a {op} node."), N_("The data enters no {op} node.")),
    "op after recurrent data": (N_("The data enters a {op} node after the recurrent part: the data joins "
                                "what the recurrent part made."),
                                N_("No {op} node after the recurrent part takes the data (a constant is "
                                "not the data).")),
    "op after op data": (N_("The data enters a {op} node after a {after} node."),
                         N_("No {op} node after a {after} node takes the data.")),
    "count equals": (N_("The number of {op} nodes is exactly {n}."),
                     N_("The number of {op} nodes is not {n}.")),
    "count at_least": (N_("The number of {op} nodes is at least {n}."),
                       N_("The number of {op} nodes is below {n}.")),
    "count at_most": (N_("The number of {op} nodes is at most {n}."),
                      N_("The number of {op} nodes is above {n}.")),
    "path first": (N_("The data's first time step reaches the output."),
                   N_("No path leads from the data's first time step to the output.")),
    "path last": (N_("The data's last time step reaches the output."),
                  N_("No path leads from the data's last time step to the output.")),
    "path": (N_("Time step {step} of the data reaches the output."),
             N_("No path leads from time step {step} of the data to the output.")),
    "one_step_at_a_time": (N_("The data enters one time step at a time: each step meets the graph at a node "
                           "of its own."),
                           N_("The data does not enter one time step at a time: a node takes several "
                           "steps at once, or fewer than two steps enter.")),
    "weighs_steps": (N_("Every time step reaches the prediction: a {op} computed after the recurrent part "
                     "weighs its whole output sequence."),
                     N_("No {op} computed after the recurrent part weighs its whole output sequence "
                     "{dims}.")),
    "output_shape": (N_("The output's shape is {shape}."), N_("The output's shape is not {shape}.")),
    "reference_shape": (N_("Your graph has the same shape as the reference answer's."),
                        N_("Your graph's shape differs from the reference answer's.")),
    "grows": (N_("The graph grows with the time steps: twice the steps record more nodes."),
              N_("The graph does not grow with the time steps: twice the steps record no more nodes.")),
    "grows op": (N_("The graph grows with the time steps: twice the steps record more {op} nodes."),
                 N_("Twice the time steps record no more {op} nodes.")),
    "changes_with_data graph": (N_("Two different inputs record two different graphs: the data picks which "
                                "ops run."),
                                N_("Different inputs all record the same graph: nothing decides by the data "
                                "which ops run.")),
    "changes_with_data steps": (N_("The data decides how many time steps run: different inputs leave "
                                "different numbers of steps in the graph."),
                                N_("The number of time steps in the graph does not change with the data.")),
    "changes_with_data op": (N_("The count of {op} nodes changes with the data."),
                             N_("The count of {op} nodes does not change with the data.")),
    "prints_every_step": (N_("Ordinary Python runs while the graph is recorded: your print ran at every "
                          "time step, and the graph has no node for it."),
                          N_("print did not run at every time step the graph holds.")),
}

# Fact key -> what a run was found to hold, said after the fact's sentence in a verdict's reason.
FOUND: dict[str, str] = {
    "count equals": N_("It is {found}."),
    "count at_least": N_("It is {found}."),
    "count at_most": N_("It is {found}."),
    "output_shape": N_("It is {found}."),
    "grows": N_("{long} nodes with twice the steps, {short} before."),
    "grows op": N_("{long} with twice the steps, {short} before."),
    "changes_with_data graph": N_("{tries} different inputs tried."),
    "changes_with_data steps": N_("{tries} different inputs all left {found} time steps in the graph."),
    "changes_with_data op": N_("{tries} different inputs all recorded {found}."),
    "prints_every_step": N_("print ran {calls} times for {steps} time steps."),
}


class FactError(ValueError):
    """A fact's table is wrong: ``key`` is where, inside the table (``"op"``, ``"all[1].step"``);
    ``code``, a stable name for the error; ``words``, its sentence (a Message, said per reader);
    ``message``, its English."""

    def __init__(self, key: str, code: str, words: Message) -> None:
        super().__init__(words.english())
        self.key, self.code, self.words, self.message = key, code, words, words.english()


def WHOLE_NUMBER(low: int, high: int) -> Message:  # noqa: N802 (a sentence, as the constants beside it)
    """"expected a whole number from LOW to HIGH", said per reader."""
    return later("expected a whole number from {low} to {high}", low=low, high=high)


def ONE_OF(choices: Iterable[str]) -> Message:  # noqa: N802
    """"expected one of A, B, C" (the choices are names: they stay as written), said per reader."""
    return later("expected one of {choices}", choices=", ".join(choices))


@dataclass(frozen=True)
class Outcome:
    """A fact's answer for one run: whether it holds, and the sentence of what was found."""

    holds: bool
    found: Message | Sentences  # the fact's sentence as the run makes it true or false, said where shown


def op_names(name: object, key: str = "op") -> frozenset[str]:
    """An op as a teacher writes it ("Softmax", "SoftmaxBackward0", "CopySlices", a custom
    Function's "CubeBackward") -> autograd's names for it. Raises FactError if it names no op
    torch records."""
    if not isinstance(name, str) or not name or len(name) > 80:
        raise FactError(key, "expected-op", later("expected the name of an autograd op, such as {example}",
                                                   example="AddBackward0, Softmax"))
    if name in TORCH_OPS or CUSTOM_OP.fullmatch(name):
        return frozenset({name})
    found = frozenset(n for n in TORCH_OPS if re.fullmatch(rf"{re.escape(name)}Backward\d*", n))
    if found:
        return found
    near = difflib.get_close_matches(name, TORCH_OPS, n=1)
    if near:
        raise FactError(key, "unknown-op",
                        later("{name} is not an op autograd records (did you mean {near}?)",
                                                 name=repr(name), near=near[0]))
    raise FactError(key, "unknown-op", later("{name} is not an op autograd records", name=repr(name)))


class Fact:
    """One fact: its table's values, its sentences, and how a run is judged."""

    key = ""  # the WORDS entry
    runs_again = False  # needs the student's code run again otherwise (``rerun``)

    def words(self) -> dict[str, object]:
        return {}

    def sentence(self, holds: bool = True) -> Message:
        return later(WORDS[self.key][0 if holds else 1], **self.words())

    def outcome(self, holds: bool, **found: object) -> Outcome:
        """Whether the fact holds, with its sentence and what the run was found to hold."""
        detail = FOUND.get(self.key) if found else None
        said = self.sentence(holds)
        return Outcome(holds, later_sentences(said, later(detail, **self.words(),
                                                          **found)) if detail else said)

    def judge(self, ask) -> Outcome:
        """``ask``: the check's ``Context`` (the run, its Structure, runs of variants)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Draws(Fact):
    key = "draws"

    def judge(self, ask) -> Outcome:
        return self.outcome(True)  # a run without a graph never reaches a fact


@dataclass(frozen=True)
class Op(Fact):
    op: str
    names: frozenset[str]
    after: str | None = None  # RECURRENT, or an op
    after_names: frozenset[str] = frozenset()
    data: bool = False

    @property
    def key(self) -> str:
        after = "" if self.after is None else " after recurrent" if self.after == RECURRENT else " after op"
        return f"op{after}{' data' * self.data}"

    def words(self) -> dict[str, object]:
        return {"op": self.op, "after": self.after}

    def nodes(self, graph: Structure) -> set[int]:
        found = set().union(*(graph.op_nodes(n) for n in self.names))
        if self.after == RECURRENT:
            found &= graph.after(graph.recurrent())
        elif self.after is not None:
            found &= graph.after(set().union(*(graph.op_nodes(n) for n in self.after_names)))
        return found & graph.data_nodes() if self.data else found

    def judge(self, ask) -> Outcome:
        return self.outcome(bool(self.nodes(ask.graph)))


@dataclass(frozen=True)
class Count(Fact):
    op: str
    names: frozenset[str]
    how: str  # "equals", "at_least", "at_most"
    n: int

    @property
    def key(self) -> str:
        return f"count {self.how}"

    def words(self) -> dict[str, object]:
        return {"op": self.op, "n": self.n}

    def judge(self, ask) -> Outcome:
        ops = ask.graph.ops()
        found = sum(ops[n] for n in self.names)
        holds = {"equals": found == self.n, "at_least": found >= self.n, "at_most": found <= self.n}[self.how]
        return self.outcome(holds, found=found)


@dataclass(frozen=True)
class Path(Fact):
    step: int  # a time step of the data, counted from 0; negative counts from the end

    @property
    def key(self) -> str:
        return {0: "path first", -1: "path last"}.get(self.step, "path")

    def words(self) -> dict[str, object]:
        return {"step": self.step}

    def judge(self, ask) -> Outcome:
        return self.outcome(any((self.step if self.step >= 0 else e.shape[1] + self.step) in e.steps
                                for e in ask.graph.timed_entries()))


@dataclass(frozen=True)
class OneStepAtATime(Fact):
    key = "one_step_at_a_time"

    def judge(self, ask) -> Outcome:
        entries = ask.graph.timed_entries()
        return self.outcome(bool(entries) and all(len(e.steps) == 1 for e in entries)
                            and len(ask.graph.steps_taken()) > 1)


@dataclass(frozen=True)
class WeighsSteps(Fact):
    """A softmax made from the recurrent part, whose weights meet a whole sequence (batch,
    steps, features) of the recurrent part that they did not make."""

    op: str = "SoftmaxBackward0"
    names: frozenset[str] = frozenset({"SoftmaxBackward0"})
    key = "weighs_steps"

    def words(self) -> dict[str, object]:
        return {"op": self.op, "dims": "(batch, steps, features)"}

    def judge(self, ask) -> Outcome:
        graph = ask.graph
        made = graph.recurrent()
        made |= graph.after(made)
        weights = {i for i in made if graph.op[i] in self.names}
        weighted = weights | graph.after(weights)
        return self.outcome(any(any(a in weighted for a in operands) and any(
            b not in weighted and b in made and len(graph.shape[b] or ()) >= 3 for b in operands)
            for operands in graph.inputs))


@dataclass(frozen=True)
class OutputShape(Fact):
    shape: tuple[int, ...]
    key = "output_shape"

    def words(self) -> dict[str, object]:
        return {"shape": self.shape}

    def judge(self, ask) -> Outcome:
        found = tuple(ask.graph.output_shape or ())
        return self.outcome(found == self.shape, found=found)


@dataclass(frozen=True)
class ReferenceShape(Fact):
    key = "reference_shape"  # the reference answer runs once per check: the student's code does not

    def judge(self, ask) -> Outcome:
        return self.outcome(ask.key == ask.reference_key())
