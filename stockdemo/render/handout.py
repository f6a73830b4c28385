"""A graph to hand out: one self-contained HTML file with the interactive view of one run.

The file carries the view's JavaScript and CSS (the built assets in
``stockdemo/ui/graph_view/``), the run's payload (``render.payload.view_json``,
the same data the app sends its component) and the node table, all inline. It
opens from disk in a browser with no server and no network: pan, zoom, hover,
click, the table, and, when a Trace is given, the Record and Backward replays.
A Content-Security-Policy in the file forbids every request, so nothing it
does can reach out.

    python -m stockdemo graph --seq-len 8 --format html -o run.html

Pure: no Streamlit here (the app's download calls the same function). Its words, the view's
too, are in the language spoken when it is made (``stockdemo.i18n``): a handout saved in
Spanish stays in Spanish, its ``<html lang>`` too.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stockdemo import theme
from stockdemo.cells import CELL_LABELS
from stockdemo.config import RUN_KNOBS, VIEW, RunConfig
from stockdemo.i18n import TAGS, language, number, tr, trn
from stockdemo.i18n.numbers import significant
from stockdemo.layout.picture import Picture
from stockdemo.render.node_table import COLUMNS, node_rows
from stockdemo.render.payload import view_json
from stockdemo.render.poster import FONT_FAMILY, poster_html
from stockdemo.render.poster import STYLE as POSTER_STYLE

if TYPE_CHECKING:
    from stockdemo.replay.trace import Trace

ASSETS = Path(__file__).resolve().parents[1] / "ui" / "graph_view"
SCRIPT = ASSETS / "handout.js"  # built from frontend/graph_view/src/handout.js
STYLE = ASSETS / "graph_view.css"
BOX_HEIGHT = 640  # px: a handout has the window to itself; the view grows to it
# The graph's width on a 1440 px wide window (the body's padding taken off): the poster's
# labels are chosen for it (stockdemo/render/poster.py); its box follows the real width.
GRAPH_PX = 1440 - 48
# The view's code is carried as text and run after the first paint, so the poster (the same
# picture) is painted without waiting for it to compile (a new tab: 89 -> 82 ms to the picture).
LOADER = ("(() => { const run = () => { const s = document.createElement('script'); "
          "s.textContent = document.getElementById('stockdemo-view').textContent; "
          "document.body.append(s); }; "
          "if (document.querySelector(\"[data-testid='graph-poster']\")) "
          "requestAnimationFrame(() => setTimeout(run, 0)); else run(); })();")
# Inline scripts and styles only; no fetch, image, font, frame or form target anywhere.
POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
          "img-src data:; base-uri 'none'; form-action 'none'")


def theme_variables(selector: str = ":root") -> str:
    """The --st-* variables the view's CSS reads (in the app, Streamlit's theme sets them)."""
    return f"""
{selector} {{
  --st-font: {FONT_FAMILY};
  --st-text-color: {theme.TEXT};
  --st-background-color: #FFFFFF;
  --st-secondary-background-color: #F0F3F6;
  --st-border-color: #D5DAE5;
  --st-border-color-light: #E6EAF1;
  --st-primary-color: {theme.BLUE};
  --st-base-radius: 0.5rem;
  --st-button-radius: 0.5rem;
}}
"""


_THEME = theme_variables() + f"""
body {{ margin: 0 auto; max-width: 1600px; padding: 1rem 1.5rem 2rem; background: #FFFFFF;
  color: {theme.TEXT}; font: 16px/1.45 var(--st-font); }}
h1 {{ font-size: 1.5rem; margin: 0 0 0.3rem; }}
.hd-about {{ color: {theme.CAPTION}; margin: 0 0 0.8rem; }}
.hd-facts {{ display: flex; flex-wrap: wrap; gap: 0.3rem 1.4rem; margin: 0 0 0.8rem; padding: 0; }}
.hd-facts div {{ display: flex; gap: 0.4rem; }}
.hd-facts dt {{ color: {theme.CAPTION}; }}
.hd-facts dd {{ margin: 0; font-weight: 600; }}
details {{ margin-top: 1rem; }}
summary {{ cursor: pointer; font-weight: 600; }}
pre {{ background: #F8F9FB; padding: 0.8rem; overflow-x: auto; font-size: 0.85rem; }}
.hd-table {{ border-collapse: collapse; font-size: 0.85rem; margin-top: 0.5rem; }}
.hd-table th, .hd-table td {{ border: 1px solid #E6EAF1; padding: 0.15rem 0.5rem; text-align: left; }}
.hd-table th {{ background: #F0F3F6; position: sticky; top: 0; }}
.hd-table td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
footer {{ color: {theme.CAPTION}; margin-top: 1.5rem; font-size: 0.85rem; }}
/* The poster sits where the view's canvas will: under the toolbar (2rem a row, 0.3rem
   between rows, the view's 0.35rem gap), whose replay controls wrap on a narrow page
   (rows measured in Chromium: one from 45.25rem wide, four under 17.5rem); its height
   follows the page's width (container units). */
.hd-poster-box {{ container-type: inline-size; position: relative; }}
.hd-poster-box .hd-poster {{ margin-top: 2.35rem; }}
@container (width < 45.25rem) {{ .hd-replay .hd-poster {{ margin-top: 4.65rem; }} }}
@container (width < 31.875rem) {{ .hd-replay .hd-poster {{ margin-top: 6.95rem; }} }}
@container (width < 17.5rem) {{ .hd-replay .hd-poster {{ margin-top: 9.25rem; }} }}
.hd-noscript {{ position: absolute; top: 0; margin: 0; line-height: 2rem; color: {theme.CAPTION}; }}
"""


def _inline_script(text: str) -> str:
    """JavaScript made safe inside <script>: no sequence there can close the element."""
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.IGNORECASE).replace("<!--", "<\\!--")


def _inline_json(text: str) -> str:
    """JSON text made safe inside <script type="application/json">: '<' only occurs in strings."""
    return text.replace("<", "\\u003c")


def _table_html(picture: Picture, trace: Trace | None) -> str:
    rows = node_rows(picture, trace)
    numeric = {"step", "layer", "order in forward", "order in backward", "gradient norm"}
    head = "".join(f'<th scope="col">{html.escape(tr(c))}</th>' for c in COLUMNS)

    def cell(column: str, value: object) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            text = ""
        elif column == "gradient norm":
            text = significant(float(value), 4)
        elif isinstance(value, int):
            text = number(value)
        else:
            text = str(value)
        cls = ' class="num"' if column in numeric else ""
        return f"<td{cls}>{html.escape(text)}</td>"

    body = "\n".join("<tr>" + "".join(cell(c, row[c]) for c in COLUMNS) + "</tr>" for row in rows)
    caption = trn("Every drawn node of the graph ({n} row)", "Every drawn node of the graph ({n} rows)",
                  len(rows))
    return (f'<table class="hd-table" data-testid="handout-table"><caption>{html.escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>")


def _poster_block(picture: Picture, replays: bool) -> str:
    """The picture as a poster where the view's canvas will be, with a word for a reader
    without scripts; "" where the picture has no poster."""
    poster = poster_html(picture, GRAPH_PX, BOX_HEIGHT)
    if not poster:
        return ""
    alone = tr("Scripts are off here, so this is the picture alone: with them on, it zooms, "
               "names each node's line and replays.")
    return (f'<div class="hd-poster-box{" hd-replay" if replays else ""}"><noscript><p class="hd-noscript">'
            f"{html.escape(alone)}</p></noscript>{poster}</div>")


def _code_block(code: str | None) -> str:
    """The run's PyTorch code, folded; "" without code."""
    summary = tr("The PyTorch code of this run")
    return ("" if code is None else f"<details><summary>{html.escape(summary)}</summary>"
            f"<pre><code>{html.escape(code)}</code></pre></details>")


def handout_html(picture: Picture, trace: Trace | None = None, *, title: str,
                 facts: Sequence[tuple[str, str]] = (), code: str | None = None,
                 about: str = "") -> str:
    """One run's graph view as a self-contained HTML page (see the module docstring).

    ``facts``: (label, value) pairs shown above the graph (the run's settings and
    size); ``code``: the PyTorch code that reproduces the run, shown folded;
    ``about``: one sentence under the title.
    """
    data = view_json(picture, trace, height=BOX_HEIGHT)
    fact_list = "".join(f"<div><dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd></div>"
                        for k, v in facts)
    replay = (tr("Press ● Record to watch autograd record the graph node by node, and ◀ Backward "
                 "to watch backward() run through it in the engine's order.") if trace is not None
              else tr("This file has no replay of the run (the view it came from had none)."))
    table_summary = tr("The graph as a table")
    footer = tr("Made by stockdemo from one live PyTorch run. This file needs no server and no network.")
    return f"""<!doctype html>
<html lang="{TAGS[language()]}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{_THEME}</style>
<style>{STYLE.read_text(encoding="utf-8")}</style>
<style>{POSTER_STYLE}</style>
</head>
<body>
<main>
<h1>{html.escape(title)}</h1>
<p class="hd-about">{html.escape(about)} {html.escape(replay)}</p>
<dl class="hd-facts" data-testid="handout-facts">{fact_list}</dl>
<p class="hd-about" data-testid="handout-caption">{html.escape(str(picture.caption))}</p>
<div id="graph">{_poster_block(picture, trace is not None)}</div>
<details data-testid="handout-table-box"><summary>{html.escape(table_summary)}</summary>
{_table_html(picture, trace)}
</details>
{_code_block(code)}
</main>
<footer>{html.escape(footer)}</footer>
<script type="application/json" id="stockdemo-data">{_inline_json(data)}</script>
<script type="text/plain" id="stockdemo-view">{_inline_script(SCRIPT.read_text(encoding="utf-8"))}</script>
<script>{LOADER}</script>
</body>
</html>
"""


def run_facts(config: RunConfig, picture: Picture) -> list[tuple[str, str]]:
    """The run's settings and its graph's size, as the handout shows them (the caption says more)."""
    facts = [(tr(k.label), tr(CELL_LABELS.get(config.cell, config.cell)) if k.name == "cell"
              else str(getattr(config, k.name))) for k in RUN_KNOBS]
    return [*facts, *size_facts(picture)]


def size_facts(picture: Picture) -> list[tuple[str, str]]:
    """The graph's size as a handout's facts: nodes, edges and the view drawn."""
    counts = picture.counts
    return [(tr("Nodes"), number(counts.nodes)), (tr("Edges"), number(counts.edges)),
            (tr(VIEW.label), VIEW.show(picture.view))]


def file_name(config: RunConfig) -> str:
    """e.g. ``stockdemo-graph-gru-T200-L4.html``."""
    return f"stockdemo-graph-{config.cell}-T{config.seq_len}-L{config.num_layers}.html"


def run_handout(config: RunConfig, picture: Picture, trace: Trace | None) -> str:
    """The handout of one Playground-style run: its settings, graph, replay and code."""
    from stockdemo.live.reproduce import reproduce_code

    return handout_html(
        picture, trace,
        title=trn("Autograd graph: {cell}, T = {T}, {n} layer", "Autograd graph: {cell}, T = {T}, {n} layers",
                  config.num_layers, cell=tr(CELL_LABELS.get(config.cell, config.cell)), T=config.seq_len),
        about=tr("The graph PyTorch recorded while this model ran once. Wheel or pinch to zoom, "
                 "drag to pan, hover or click a node for its op, shape and the line that made it."),
        facts=run_facts(config, picture), code=reproduce_code(config))


def view_handout(picture: Picture, trace: Trace | None = None, config: RunConfig | None = None) -> str:
    """The handout of any graph view: with ``config``, its run's settings, code and replay."""
    if config is not None:
        return run_handout(config, picture, trace)
    return handout_html(picture, trace, title=tr("Autograd graph from stockdemo"),
                        about=tr("The graph PyTorch recorded while this model ran."),
                        facts=size_facts(picture))


def view_file_name(config: RunConfig | None, key: str) -> str:
    """The download's file name: the run's settings when known, else the view's key."""
    return file_name(config) if config is not None else f"stockdemo-graph-{key.replace('_', '-')}.html"
