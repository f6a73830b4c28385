"""What a Lab report is made of: ``Report``, its graphs, its charts, and the words for numbers.

Every experiment's report (stockdemo/lab/figures.py, stockdemo/lab/mistakes.py) is built
from these, so the Lab page lays out one shape whatever the experiment. A report is made
once and shown to every session (``ui/caches.py``), so it holds no words in one language:
its words are ``later(...)`` Messages and its numbers are written when shown
(``stockdemo.i18n.deferred``), its charts are ``SharedFigure``s, and its table's column
names and words are msgids the page says (``ui.table(..., words=True)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from stockdemo import lab, theme
from stockdemo.figures import frame, with_automargin
from stockdemo.graph import Graph
from stockdemo.i18n import N_, Message, later, later_n
from stockdemo.i18n.deferred import later_number, later_significant
from stockdemo.shared_figure import SharedFigure

# The three ways of reading a batch, and the two ways of carrying a state: a chart's legend.
ONE_BY_ONE, PACKED, PADDED = N_("one by one"), N_("packed"), N_("padded")
CARRIED, DETACHED = N_("carried"), N_("detached")
COLOURS = {ONE_BY_ONE: theme.BLUE, PACKED: theme.GREEN, PADDED: theme.VERMILION,
           CARRIED: theme.VERMILION, DETACHED: theme.BLUE}


class LabGraph(NamedTuple):
    """One graph an experiment shows: a short name to pick it by, a caption with its numbers."""

    label: str  # an English msgid, the same whatever the settings: the picker says it, the URL holds it
    caption: Message
    graph: Graph


@dataclass(frozen=True)
class Report:
    headline: Message
    metrics: tuple[tuple[Message, object, Message | str], ...]  # (label, value said by str, help)
    errors: tuple[tuple[Message, str], ...]  # (what the code did, torch's message word for word)
    code: tuple[tuple[Message, str], ...]  # (caption, the source that ran)
    notes: tuple[Message, ...]  # markdown
    graphs: tuple[LabGraph, ...]
    figures: tuple[tuple[SharedFigure, Message, Message | str], ...]  # (figure, alt text, caption or "")
    table: pd.DataFrame | None  # its column names and its words are msgids


def size(n: float) -> Message:
    """Bytes for people: 15288 -> '14.9 KB'."""
    if abs(n) >= 1024:
        return later("{kb} KB", kb=later_number(n / 1024, 1))
    return later("{bytes} B", bytes=later_number(n, 0))


def gap(value: float) -> Message:
    """A largest difference between two sets of predictions, in words when there is none."""
    if value == 0:
        return later("exactly equal")
    return later("at most {gap} apart", gap=later_significant(value, 1))


def ms(seconds: float, digits: int = 0) -> Message:
    return later("{ms} ms", ms=later_number(seconds * 1e3, digits))


def nodes(n: int) -> Message:
    return later_n("{n} node", "{n} nodes", int(n))


def days(n: int) -> Message:
    return later_n("{n} day", "{n} days", int(n))


def run_time(result) -> tuple[Message, Message, Message]:
    return (later("Run time"), ms(result.seconds),
            later("The whole experiment, measured on the server when these settings first ran."))


def mistake(result: lab.Broken, did: Message, *, caption: Message | None = None,
            fix: Message | None = None) -> dict[str, tuple[tuple[Message, str], ...]]:
    """What every mistake made on purpose shows: torch's own message, the code, the fix.

    ``did``: what the code did when torch raised, e.g. "The second `loss.backward()`".
    """
    return {"errors": ((did, result.error),),
            "code": ((caption or later("The mistake"), result.mistake),
                     (fix or later("The fix"), result.fix))}


def snapshot_table(*snapshots: lab.Snapshot) -> pd.DataFrame:
    return pd.DataFrame([{N_("moment"): s.label, N_("nodes"): s.saved.nodes,
                          N_("saved tensors held"): s.saved.tensors, N_("saved bytes held"): s.saved.bytes,
                          N_("freed by backward()"): s.saved.freed,
                          N_("changed in place"): s.saved.modified} for s in snapshots])


def chart(data: list[dict], layout: dict, title: Message, height: int = 380,
          subtitle: Message | str = "") -> SharedFigure:
    """A Lab chart, its words placed as every chart's are (``figures.frame``), said per reader."""
    return SharedFigure({"data": data, "layout": {
        **frame(title, height, subtitle),
        "font": {"family": theme.FONT_FAMILY, "size": theme.FONT_SIZE},
        **with_automargin(layout)}})
