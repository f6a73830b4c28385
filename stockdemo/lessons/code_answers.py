"""Measures on code a lesson gives: run in the sandbox (``stockdemo.sandbox.run_code``), as a
learner's code runs, never in the server. A step on Your code carries its code
(``CodeSettings``); measures that compare it with its challenge's reference answer run both.

Counts are the page's own: ``graph_of_record``'s nodes, the input and output included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import ClassVar

from stockdemo.code.link import code_to_link
from stockdemo.config import CODE
from stockdemo.graph.ids import graph_of_record
from stockdemo.i18n import N_, Message, later
from stockdemo.lessons.facts import op_names
from stockdemo.lessons.measures import Param, Reading, measure
from stockdemo.lessons.record import Structure
from stockdemo.lessons.variants import with_longer_sequences
from stockdemo.sandbox import run_code
from stockdemo.sandbox.protocol import CodeRun

MAX_PRINTED = 80  # characters of a printed line an answer shows
# The session whose answer this is, for the sandbox's fair queue (None: a caller of its own).
_WHO: ContextVar[str | None] = ContextVar("lesson_runs_for", default=None)

WORDS: dict[str, Message] = {  # said in the reader's language where the answer is shown
    "not run": later("not run here"),
    "no graph": later("`predictions` has no autograd graph behind it."),
}


@dataclass(frozen=True)
class CodeSettings:
    """A Your code step's settings: the code the page opens on, and its challenge's reference
    answer (None without one), which some measures run beside it."""

    source: str
    answer: str | None = None

    KNOBS: ClassVar[tuple] = (CODE,)

    @property
    def code(self) -> str:
        """The page's ``?code=``: the source, compressed as a link carries it."""
        return code_to_link(self.source) or ""


class _Stopped(Exception):
    """A run of the lesson's code made no graph: ``said`` is why, for the answer's detail."""

    def __init__(self, said: Message) -> None:
        super().__init__(said)
        self.said = said


@contextmanager
def runs_for(who: str | None) -> Iterator[None]:
    """Answers revealed in this block run their code in the sandbox's queue as ``who``'s (a
    session: a teacher previewing a lesson waits their turn with the class)."""
    token = _WHO.set(who)
    try:
        yield
    finally:
        _WHO.reset(token)


def _ran(source: str, graph: bool = True) -> CodeRun:
    """``source`` run in the sandbox; raises _Stopped when it fails (or draws no graph, if
    ``graph``)."""
    ran = run_code(source, who=_WHO.get())
    if not ran.ok:
        message = ran.message or ran.status
        if ran.error is not None and ran.error.kind == "unavailable":
            raise _Stopped(later("The sandbox that runs learners' code could not run it on this server "
                                 "({message}): open Your code to see why.", message=message))
        raise _Stopped(later("The lesson's code stopped: {message}", message=message))
    if graph and ran.graph is None:
        raise _Stopped(WORDS["no graph"])
    return ran


def _nodes(ran: CodeRun) -> int:
    return 0 if ran.graph is None else graph_of_record(ran.graph).counts.nodes


def _ops(ran: CodeRun, op: str) -> int:
    ops = Structure(ran.graph).ops()
    return sum(ops[name] for name in op_names(op))


def code_measure(name: str, label: str, detail: str, values: tuple[str, ...], params: dict | None = None,
                 needs_answer: bool = False):
    """A measure on a step's code: a run that stops answers "not run here" and says why."""
    def register(compute):
        def guarded(settings: CodeSettings, **given: object) -> Reading:
            try:
                return compute(settings, **given)
            except _Stopped as stopped:
                return Reading(WORDS["not run"], {}, stopped.said)
        measure(name, CodeSettings, label, detail, values, params, needs_answer)(guarded)
        return compute
    return register


def _steps(ran: CodeRun) -> int:
    """The time steps of the run's data (its dimension 1), "?" without data of three dimensions."""
    entries = Structure(ran.graph).timed_entries()
    return max((e.shape[1] for e in entries), default="?")


@code_measure("nodes_kept", N_("Nodes the graph keeps, T = {t}"),
              N_("The step's code records {whole} nodes; the reference answer's, {kept}."),
              ("kept", "whole", "t"), needs_answer=True)
def nodes_kept(settings: CodeSettings) -> Reading:
    """The step's code, then its challenge's answer: the nodes each graph holds."""
    before, after = _ran(settings.source), _ran(settings.answer)
    kept, whole = _nodes(after), _nodes(before)
    return Reading(later("{part} of {whole}", part=kept, whole=whole),
                   {"kept": kept, "whole": whole, "t": _steps(before)})


@code_measure("answer_gains", N_("Nodes gained"),
              N_("The step's code records {before}; the reference answer's, {after}."),
              ("before", "after", "op"), {"op": Param("op")}, needs_answer=True)
def answer_gains(settings: CodeSettings, op: str | None = None) -> Reading:
    """How many nodes (or nodes of ``op``) the reference answer's graph has more than the code's."""
    before, after = _ran(settings.source), _ran(settings.answer)
    count = (lambda r: _ops(r, op)) if op else _nodes
    return Reading(f"{count(after) - count(before):+d}",
                   {"before": count(before), "after": count(after), "op": op or ""})


@code_measure("code_nodes", N_("Nodes in the graph"), N_("The graph of `predictions` holds {nodes} nodes."),
              ("nodes",))
def code_nodes(settings: CodeSettings) -> Reading:
    """Nodes behind ``predictions`` (0 when it has no graph: made under ``no_grad``)."""
    nodes = _nodes(_ran(settings.source, graph=False))
    return Reading(str(nodes), {"nodes": nodes})


@code_measure("code_ops", N_("{op} nodes"), N_("The graph of `predictions` holds {count} {op} nodes."),
              ("op", "count"), {"op": Param("op", required=True)})
def code_ops(settings: CodeSettings, op: str) -> Reading:
    count = _ops(_ran(settings.source), op)
    return Reading(str(count), {"op": op, "count": count})


@code_measure("code_output_shape", "predictions.shape", N_("The output's shape."), ())
def code_output_shape(settings: CodeSettings) -> Reading:
    return Reading(str(tuple(_ran(settings.source).shape or ())))


@code_measure("code_growth", N_("Nodes gained, T {t} → {longer_t}"),
              N_("T = {t}: {short} nodes. T = {longer_t}: {long} nodes."), ("t", "longer_t", "short", "long"))
def code_growth(settings: CodeSettings) -> Reading:
    """The code, then again with its data twice as long in time (``variants``)."""
    short, long = _ran(settings.source), _ran(with_longer_sequences(settings.source))
    return Reading(f"{_nodes(long) - _nodes(short):+d}", {"t": _steps(short), "longer_t": _steps(long),
                                                         "short": _nodes(short), "long": _nodes(long)})


@code_measure("code_data_steps", N_("Time steps of the data in the graph"),
              N_("{steps} of the data's {t} time steps have a path to the output."), ("steps", "t"))
def code_data_steps(settings: CodeSettings) -> Reading:
    ran = _ran(settings.source)
    steps = len(Structure(ran.graph).steps_taken())
    return Reading(str(steps), {"steps": steps, "t": _steps(ran)})


@code_measure("printed_lines", N_("Lines printed"), N_("The run printed {lines} lines."), ("lines",))
def printed_lines(settings: CodeSettings) -> Reading:
    lines = len(_ran(settings.source, graph=False).printed.splitlines())
    return Reading(str(lines), {"lines": lines})


@code_measure("printed_last", N_("What the run printed last"), N_("Its last printed line: {line}"), ("line",))
def printed_last(settings: CodeSettings) -> Reading:
    """The last line the run printed (cut to ``MAX_PRINTED`` characters), as the value."""
    lines = _ran(settings.source, graph=False).printed.strip().splitlines() or [""]
    return Reading(lines[-1][:MAX_PRINTED], {"line": lines[-1][:MAX_PRINTED]})


@code_measure("code_op_shape", N_("The shape of a {op} node"),
              N_("The first {op} node of the graph makes a tensor of shape {shape}."),
              ("op", "shape"), {"op": Param("op", required=True)})
def code_op_shape(settings: CodeSettings, op: str) -> Reading:
    """The tensor shape the first ``op`` node made (by creation order), "none" without one."""
    graph = Structure(_ran(settings.source).graph)
    names = op_names(op)
    made = sorted((seq, i) for seq, i in graph.made if graph.op[i] in names)
    shape = str(tuple(graph.shape[made[0][1]] or ())) if made else "none"
    return Reading(shape, {"op": op, "shape": shape})


@code_measure("graphs_freed", N_("Graphs backward() freed"),
              N_("The run called backward() {built} times: each call walked one graph and freed it."),
              ("built",))
def graphs_freed(settings: CodeSettings) -> Reading:
    built = _ran(settings.source, graph=False).built
    return Reading(str(built), {"built": built})


@code_measure("graph_sizes", N_("Different graph sizes"),
              N_("The graphs backward() freed, in nodes: {sizes}."), ("sizes", "graphs"))
def graph_sizes(settings: CodeSettings) -> Reading:
    """How many different sizes the graphs that backward() freed have (the film strip's frames)."""
    ran = _ran(settings.source, graph=False)
    sizes = [graph_of_record(g).counts.nodes for g in ran.graphs]
    return Reading(str(len(Counter(sizes))), {"sizes": ", ".join(map(str, sizes)), "graphs": len(sizes)})
