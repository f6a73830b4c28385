"""What a Lab report is made of: ``Report``, its graphs, its charts, and the words for numbers.

Every experiment's report (stockdemo/lab/figures.py, stockdemo/lab/mistakes.py) is built
from these, so the Lab page lays out one shape whatever the experiment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd
import plotly.graph_objects as go

from stockdemo import lab, theme
from stockdemo.figures import frame, with_automargin
from stockdemo.graph import Graph

COLOURS = {"one by one": theme.BLUE, "packed": theme.GREEN, "padded": theme.VERMILION,
           "carried": theme.VERMILION, "detached": theme.BLUE}


class LabGraph(NamedTuple):
    """One graph an experiment shows: a short name to pick it by, a caption with its numbers."""

    label: str  # stable whatever the settings: the page's picker and the URL use it
    caption: str
    graph: Graph


@dataclass(frozen=True)
class Report:
    headline: str
    metrics: tuple[tuple[str, str, str], ...]  # (label, value, help)
    errors: tuple[tuple[str, str], ...]  # (what the code did, torch's message word for word)
    code: tuple[tuple[str, str], ...]  # (caption, the source that ran)
    notes: tuple[str, ...]  # markdown
    graphs: tuple[LabGraph, ...]
    figures: tuple[tuple[go.Figure, str, str], ...]  # (figure, alt text, caption under it or "")
    table: pd.DataFrame | None


def size(n: float) -> str:
    """Bytes for people: 15288 -> '14.9 KB'."""
    return f"{n / 1024:,.1f} KB" if abs(n) >= 1024 else f"{n:,.0f} B"


def gap(value: float) -> str:
    """A largest difference between two sets of predictions, in words when there is none."""
    return "exactly equal" if value == 0 else f"at most {value:.1g} apart"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms"


def run_time(result) -> tuple[str, str, str]:
    return ("Run time", ms(result.seconds),
            "The whole experiment, measured on the server when these settings first ran.")


def mistake(result: lab.Broken, did: str, *, caption: str = "The mistake",
            fix: str = "The fix") -> dict[str, tuple[tuple[str, str], ...]]:
    """What every mistake made on purpose shows: torch's own message, the code, the fix.

    ``did``: what the code did when torch raised, e.g. "The second `loss.backward()`".
    """
    return {"errors": ((did, result.error),),
            "code": ((caption, result.mistake), (fix, result.fix))}


def snapshot_table(*snapshots: lab.Snapshot) -> pd.DataFrame:
    return pd.DataFrame([{"moment": s.label, "nodes": s.saved.nodes,
                          "saved tensors held": s.saved.tensors, "saved bytes held": s.saved.bytes,
                          "freed by backward()": s.saved.freed,
                          "changed in place": s.saved.modified} for s in snapshots])


def chart(data: list[dict], layout: dict, title: str, height: int = 380, subtitle: str = "") -> go.Figure:
    """A Lab chart, its words placed as every chart's are (``figures.frame``)."""
    return go.Figure({"data": data, "layout": {
        **frame(title, height, subtitle),
        "font": {"family": theme.FONT_FAMILY, "size": theme.FONT_SIZE},
        **with_automargin(layout)}})
