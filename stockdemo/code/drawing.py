"""A sandbox run's graph drawn for the command line: DOT, or the offline handout.

The run's record (``stockdemo.graph.recorder``) is laid out by its code
(``stockdemo.code.view.drawing_of_record``): a loop's iterations side by side,
nested loops as a grid, each weight drawn once.
"""

from __future__ import annotations

from stockdemo.code.view import drawing_of_record, picture_of_record
from stockdemo.graph.recorder import CODE_FILE
from stockdemo.i18n import tr
from stockdemo.render.dot import write_dot


def graph_dot(raw: dict) -> str:
    """The run's graph as DOT, every node placed."""
    return write_dot(picture_of_record(raw, "unrolled"), "your_code")


def graph_html(raw: dict, source: str, facts: list[tuple[str, str]]) -> str:
    """The run's graph as the offline handout: one HTML file, the code folded under it.
    ``facts`` follow the graph's size, counted as its caption counts it (the output's box too)."""
    from stockdemo.render.handout import handout_html, size_facts

    lines = source.splitlines(True)
    picture, trace = drawing_of_record(raw, getlines=lambda f: lines if f == CODE_FILE else [])
    return handout_html(picture, trace, title=tr("Autograd graph of your code"),
                        about=tr("The graph PyTorch recorded while your code ran once, in the sandbox."),
                        facts=[*size_facts(picture), *facts], code=source)
