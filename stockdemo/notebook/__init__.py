"""The graph view in a notebook: ``stockdemo.show(model, *inputs)`` as a two-way anywidget.

    import stockdemo
    w = stockdemo.show(model, x)      # runs model(x) once; the widget draws its graph
    w.selected                        # the id of the node the learner clicked (observable)
    w.observe(print, "selected")
    w.update(model, x2)               # the next run; nodes that stay glide to their place
    stockdemo.compare((model, x), (model, x2))   # two runs in one view, as on the Playground
    w.save("graph.html")              # the offline handout of the run on screen
    w.save("graph.svg")               # its picture alone, for slides (no Graphviz needed)
    stockdemo.show(model, x, lang="zh-CN")   # the view's words in Chinese (or "es"; English by default)

The widget is the app's own view (built from ``frontend/graph_view/src/widget.js`` into
``widget.js`` and ``widget.css`` here): zoom, hover (with the line of the notebook cell
that made a node), forward and backward replay, transitions. Which graph and layout a
model gets: ``stockdemo.notebook.record``.

The contract with the browser is the view's payload (``stockdemo.render.payload``): the
trait ``payload`` holds its JSON text, the view's box ``height`` px high (no filling the
window: a notebook's output has no height of its own). Values that come back: ``selected``,
the id of the box the learner clicked, or None; ``unroll``, the ids of rolled boxes (the
payload's ``folds``) to draw unrolled, which lays the run out again. anywidget's hosts
(Jupyter, JupyterLab, VS Code, Colab, marimo) load it; tested in a kernel, in JupyterLab
and in marimo (``mo.ui.anywidget(stockdemo.show(...))``). Needs ``pip install 'stockdemo[notebook]'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    import anywidget
except ImportError as e:  # the notebook extra is not installed
    raise ImportError("stockdemo.show needs anywidget: pip install 'stockdemo[notebook]'") from e
import traitlets

from stockdemo.graph.diff import graph_diff
from stockdemo.i18n import LANGUAGES, language, speaking, tr, trp
from stockdemo.i18n.tags import language_of
from stockdemo.notebook.record import Run, record, unrolled
from stockdemo.render.handout import handout_html, size_facts, theme_variables
from stockdemo.render.payload import HEIGHT, Comparison, view_json
from stockdemo.render.poster import svg_file

__all__ = ["GraphWidget", "compare", "show"]

ASSETS = Path(__file__).resolve().parent


def _css() -> str:
    """The view's CSS, with the theme Streamlit would give it, on the widget's own element."""
    own = (".stockdemo-widget { background: var(--st-background-color); color: var(--st-text-color); }"
           # JupyterLab's narrower type wrapped the tip's field names a word a line
           ".stockdemo-widget .gv-tip dt { white-space: nowrap; }")
    return theme_variables(".stockdemo-widget") + own + (ASSETS / "widget.css").read_text(encoding="utf-8")


class GraphWidget(anywidget.AnyWidget):
    """One run's autograd graph (or two runs, compared) drawn by the app's graph view."""

    _esm = ASSETS / "widget.js"
    _css = _css()
    payload = traitlets.Unicode("").tag(sync=True)  # view_payload's JSON text
    selected = traitlets.Unicode(None, allow_none=True).tag(sync=True)  # the clicked node's id
    unroll = traitlets.List(traitlets.Unicode()).tag(sync=True)  # rolled boxes to draw unrolled

    def __init__(self, run: Run, pinned: Run | None = None, *, height: int = HEIGHT,
                 view: str = "auto", lang: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.pinned = pinned  # compare mode: run A, drawn above this run (B)
        self._height = height
        self._view = view
        self._lang = spoken(lang)  # the view's words, its handout's too
        self.payload = self._payload(())

    def update(self, target: Any, *inputs: Any) -> None:
        """Draw the next run (``update(model, *inputs)`` or ``update(output)``) with a transition:
        nodes with the same id glide to their new place, new ones grow in, lost ones fade.
        Returns None: a cell ending in it draws no second copy of the widget."""
        before = self.run
        self.run = record(target, *inputs, view=self._view)
        self.unroll = []  # the new run's rolled boxes are its own
        if self.selected is not None and self.selected not in self.run.picture.drawn_as:
            self.selected = None
        self.payload = self._payload(n.id for n in graph_diff(before.graph, self.run.graph).added_nodes)

    @traitlets.observe("unroll")
    def _unroll(self, change: dict) -> None:
        """Rolled boxes opened (a click on one, or Python): the run laid out again, ids kept."""
        unroll = frozenset(change["new"])
        if unroll != self.run.unroll:
            self.run = unrolled(self.run, self._view, unroll)
            self.payload = self._payload(())

    def save(self, path: str | Path) -> Path:
        """Write the run on screen as one HTML file that opens offline (``stockdemo.render.handout``),
        or, for a name ending in ``.svg``, its picture as a static SVG (``stockdemo.render.poster``)."""
        run = self.run
        out = Path(path)
        if out.suffix.lower() == ".svg":
            out.write_text(svg_file(run.picture), encoding="utf-8")
            return out
        with speaking(self._lang):
            text = handout_html(
                run.picture, run.trace, title=tr("Autograd graph of {run}", run=run.label),
                about=tr("The graph PyTorch recorded while this model ran once, in a notebook. Wheel or "
                         "pinch to zoom, drag to pan, hover or click a node for its op, shape and line."),
                facts=[(trp("the run a handout shows", "Run"), run.label), *size_facts(run.picture)])
        out.write_text(text, encoding="utf-8")
        return out

    def _payload(self, new_ids: Any) -> str:
        comparison = None
        if self.pinned is not None:
            comparison = Comparison(self.pinned.picture, graph_diff(self.pinned.graph, self.run.graph),
                                    self.pinned.label, self.run.label)
        with speaking(self._lang):
            return view_json(self.run.picture, self.run.trace, new_ids, self.selected, self._height,
                             compare=comparison)


def spoken(lang: str | None) -> str:
    """The widget's language: ``lang`` ("zh-CN", "es", "en", or a language's own name), else
    the one spoken now (English in a notebook, unless set). Raises ValueError for another."""
    if lang is None:
        return language()
    found = language_of(lang)
    if found is None:
        raise ValueError(f"lang={lang!r}: the view speaks {', '.join(LANGUAGES)}")
    return found


def show(target: Any, *inputs: Any, view: str = "auto", height: int = HEIGHT,
         lang: str | None = None) -> GraphWidget:
    """``show(model, *inputs)`` runs ``model(*inputs)`` once and draws its graph; ``show(output)``
    draws the graph behind an output already computed (no lines, no replay).

    ``view``: "auto" (rolled past a few hundred nodes), "rolled" or "unrolled".
    ``height``: the view's height in px. ``lang``: the language of its words ("en", "zh-CN", "es").
    """
    return GraphWidget(record(target, *inputs, view=view), height=height, view=view, lang=lang)


def compare(a: Any, b: Any, *, view: str = "auto", height: int = HEIGHT,
            lang: str | None = None) -> GraphWidget:
    """Two runs in one view, A above B, nodes matched by id, what B added and A lost ringed.

    Each run is ``(model, *inputs)`` or an output tensor. ``widget.update(...)`` replaces B.
    """
    def run_of(spec: Any) -> Run:
        return record(*spec, view=view) if isinstance(spec, (tuple, list)) else record(spec, view=view)

    return GraphWidget(run_of(b), pinned=run_of(a), height=height, view=view, lang=lang)
