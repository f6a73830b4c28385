"""What the graph view and the editor show of one run of a learner's code, from the run alone.

Read by the page's run (``code_run``) and by the code's own socket (``code_route``), which
answers a Run with no script run: both draw a run the same way, so the socket's payload
and the one the page's run sends after it are the same picture.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stockdemo.config import FILM, IntKnob
from stockdemo.graph import Graph, NodeCounts
from stockdemo.i18n import N_, tr, trn, trp
from stockdemo.layout.picture import Picture
from stockdemo.sandbox import CodeRun
from stockdemo.sandbox.limits import SPEC
from stockdemo.ui.metrics import Metric, nodes_metric
from stockdemo.ui.stage import stage_spec

# A run that ended at no line of the learner's code, by how it ended (a limit says its name).
STOPPED = {"refused": N_("Refused by the sandbox."), "crash": N_("Crashed."), "unavailable": N_("Not run."),
           "limit": N_("Stopped at a limit."), "error": N_("Stopped.")}
QUEUE_NOTE_S = 1.0  # a wait shorter than this goes unsaid: the run is simply slower


def queue_words(ahead: int) -> str:
    """Where a waiting run stands, in words."""
    if ahead == 0:
        return tr("Your run is next in the sandbox's queue.")
    return trn("Your run is queued: {n} run before it, taken in turn.",
               "Your run is queued: {n} runs before it, taken in turn.", ahead)


def status(run: CodeRun) -> str:
    """A few words on the run beside the editor's Run button."""
    if run.ok:
        return tr("Ran in {ms} ms.", ms=round(run.seconds * 1e3))
    if run.error.line is not None:
        return tr("Failed on line {line}: {error}.", line=run.error.line, error=run.error.type)
    if run.error.limit in SPEC:
        return tr("Stopped at the {limit} limit.", limit=tr(SPEC[run.error.limit].title))
    return tr(STOPPED.get(run.error.kind, STOPPED["error"]))


def film_knob(run: CodeRun) -> IntKnob:
    """The stepper through a run's graphs (``run.film``; one per backward(), then the graph of
    predictions): 0 to the last, starting from the last."""
    last = len(run.film) - 1
    return FILM.variant(FILM.name, high=last, default=last)


def frame_label(run: CodeRun, i: int) -> str:
    """A film's graph as the stepper names it: 'graph 3 of 5', and the graph of predictions."""
    if i >= len(run.graphs):
        return tr("graph of predictions")
    return tr("graph {number} of {total}", number=run.built - len(run.graphs) + i + 1, total=run.built)


def run_figures(run: CodeRun, counts: NodeCounts | None = None) -> list[Metric]:
    """The run's figures, as on the Playground: the output's shape, the size of the graph on
    screen (``counts``, None for no graph: counted as the Playground counts), the time."""
    return [
        Metric(tr("Output shape"), str(run.shape) if run.shape is not None else "–"),
        nodes_metric(counts),
        Metric(trp("the time a run took", "Run"), tr("{ms} ms", ms=round(run.seconds * 1e3)),
               help=tr("From the sandbox's fork to its answer: your code, its graph and a backward().")),
    ]


def new_ids(graph: Graph, previous: np.ndarray | None) -> tuple[tuple[str, ...], np.ndarray]:
    """(the ids ``graph`` has that the previous run's graph had not, this graph's ids kept).

    A run's ids are kept as one sorted array of their hashes (8 bytes an id), not the ids: a
    closed tab's session lives on for minutes, and 8,700 id strings in a set were a megabyte
    a tab, out of the caches' budget, scattered over the heap's arenas. Nothing is new on the
    first run, nor when the graph is the previous one's.
    """
    ids = [n.id for n in graph.nodes]
    hashes = np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids))
    kept = np.sort(hashes)
    if previous is None or np.array_equal(previous, kept):
        return (), kept
    return tuple(i for i, old in zip(ids, np.isin(hashes, previous), strict=True) if not old), kept


def code_stage(run: CodeRun, frame: int, picture: Picture, *, replay: bool | None, present: bool, ran: int,
               served: bool, req: int | None = None,
               redraw: int | None = None) -> tuple[dict[str, Any], tuple[IntKnob, ...]]:
    """(the stage's spec, its knobs) for graph ``frame`` of ``run``, drawn as ``picture``: the
    run's figures, and the stepper through its film when it made more than one graph.

    ``ran``: the learner's Run it answers; ``served``: the view also takes runs answered on
    the code's socket (``code_route``); the rest as ``stage.stage_spec``.
    """
    knob = film_knob(run)
    knobs = (knob,) if knob.high > 0 else ()
    stage = stage_spec({FILM.name: frame}, knobs=knobs, replay=replay,
                       figures=run_figures(run, picture.graph.counts), present=present, pin=False,
                       grows="both", req=req, redraw=redraw, ran=ran, served=served,
                       words={FILM.name: [frame_label(run, i) for i in range(len(run.film))]})
    return stage, knobs
