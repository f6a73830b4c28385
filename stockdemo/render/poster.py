"""A picture as one static SVG: what a handout shows before its script runs, or without one.

A handout (stockdemo/render/handout.py) opens in a fresh tab. Its interactive view builds,
lays out and draws itself in about 45 ms of script before the first paint; an SVG
file paints with none. So the handout carries this poster of the same picture: the
browser paints it with the page, and the view (frontend/graph_view/src/handout.js)
takes its place once that frame is painted. A browser with scripts off, a mail preview or a
printer keeps the poster.

The poster draws what the view draws at its first fit (frontend/graph_view/src/draw.js:
dashed frames with captions, straight edges clipped to the boxes with arrow heads,
boxes filled by kind, labels where they are readable), in the picture's own points,
scaled by the SVG's viewBox. tests/browser/test_handout_browser.py checks that its
boxes land where the view then draws them.

Pure: plain text from a Picture, no Streamlit, no browser.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from stockdemo import theme
from stockdemo.i18n import later_n, tr
from stockdemo.layout.picture import Picture, PlacedNode

# A picture of more boxes than this is not postered: an SVG of thousands of elements
# paints slower than the view's canvas, which draws only what is readable.
MAX_BOXES = 2_000
# As the view draws (draw.js, camera.js): label font and arrow head in points, the
# smallest readable label in px, the fit's padding in px and its largest scale.
FONT_PT = 11
# Baselines placed, not asked of the renderer (dominant-baseline cost a file ~7 ms to paint):
# a label line's baseline this many ems below its middle, a caption's below its top (as
# canvas's textBaseline "middle" and "top" place them).
MIDDLE, TOP = 0.35, 0.9
CHAR_W = 6.1  # a mean Helvetica advance at 11 px (stockdemo.layout.picture's 6.6 at 12)
ARROW_PT = 6
LABEL_MIN_PX = 6
SHORT_MIN_BOX_PX = 9
PAD_PX = 12
MAX_SCALE = 2
DATA_KINDS = {"input", "output", "parameter"}  # drawn with a heavier frame than ops
MARKER_KINDS = {"fold", "loop"}  # a rolled or folded run's dashed markers

FONT_FAMILY = f"{theme.FONT_FAMILY}, Arial, sans-serif"  # the view's too (handout.theme_variables)


def shapes(font: str) -> str:
    """The drawing's look, on the <svg class="sd-graph"> in a handout or in a file of its own."""
    return f"""
.sd-graph text {{ font-family: {font}; text-anchor: middle; }}
.sd-graph .pf {{ fill: none; stroke: {theme.MUTED}; stroke-dasharray: 4 3; }}
.sd-graph .pc {{ fill: {theme.MUTED}; font-size: {FONT_PT}px; text-anchor: start; }}
.sd-graph .pe {{ fill: none; stroke: {theme.GRAPH_EDGE}; }}
.sd-graph .pr {{ fill: none; stroke: {theme.RECURRENT}; stroke-width: 1.6; }}
.sd-graph .pha {{ fill: {theme.GRAPH_EDGE}; }}
.sd-graph .phr {{ fill: {theme.RECURRENT}; }}
.sd-graph .pb {{ stroke: {theme.BORDER}; }}
.sd-graph .pd {{ stroke-width: 2; }}
.sd-graph .pm {{ fill: #FFFFFF; stroke: {theme.MUTED}; stroke-width: 1.4; stroke-dasharray: 4 3; }}
.sd-graph .pl {{ stroke: {theme.RECURRENT}; }}
.sd-graph .pf, .sd-graph .pe, .sd-graph .pr, .sd-graph .pb, .sd-graph .pm {{
  vector-effect: non-scaling-stroke; }}
"""


# A handout's poster box: where the view's canvas will be, bordered as the view's stage.
STYLE = shapes(f"var(--st-font, {FONT_FAMILY})") + f"""
.hd-poster {{ position: relative; box-sizing: border-box; overflow: hidden; background: #FFFFFF;
  border: 1px solid var(--st-border-color-light, #E6EAF1); border-radius: var(--st-base-radius, 0.5rem); }}
/* On a phone the view's stage is its height plus its border (graph_view.css, max-width 640px). */
@media (max-width: 640px) {{ .hd-poster {{ box-sizing: content-box; }} }}
/* As the view's canvas: inside the border, as big as the box with it; a small picture centred. */
.hd-poster svg {{ position: absolute; inset: 0 -2px -2px 0; margin: auto; width: calc(100% + 2px);
  height: calc(100% + 2px); padding: {PAD_PX}px; box-sizing: border-box; }}
"""


def text_on(fill: str) -> str:
    """Dark fills get white text (draw.js's textOn)."""
    n = int(fill[1:], 16)
    r, g, b = n >> 16 & 255, n >> 8 & 255, n & 255
    return "#FFFFFF" if 0.299 * r + 0.587 * g + 0.114 * b < 140 else theme.TEXT


def fit_scale(picture: Picture, width_px: float, height_px: float) -> float:
    """The view's first scale for the picture in a box of that size (camera.js fitTransform)."""
    return min((width_px - 2 * PAD_PX) / max(picture.width, 1),
               (height_px - 2 * PAD_PX) / max(picture.height, 1), MAX_SCALE)


def box_height(picture: Picture, width_px: float, most_px: int) -> int:
    """The view's box height for a picture `width_px` wide (box.js resize, on a page of its own)."""
    fit = round(picture.height * min(MAX_SCALE, (width_px - 2 * PAD_PX) / max(picture.width, 1))
                + 2 * PAD_PX)
    return max(260, min(most_px, fit))


def _clip(cx: float, cy: float, hw: float, hh: float, dx: float, dy: float) -> tuple[float, float]:
    """Where the ray from a box's centre along (dx, dy) leaves the box (picture.js clip)."""
    if dx == 0 and dy == 0:
        return cx, cy
    s = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return cx + dx * s, cy + dy * s


def _n(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _box(p: PlacedNode) -> str:
    x, y = _n(p.x - p.w / 2), _n(p.y - p.h / 2)
    if p.kind in MARKER_KINDS:
        cls = "pm pl" if p.kind == "loop" else "pm"
        return f'<rect class="{cls}" x="{x}" y="{y}" width="{_n(p.w)}" height="{_n(p.h)}"/>'
    cls = "pb pd" if p.kind in DATA_KINDS else "pb"
    return f'<rect class="{cls}" x="{x}" y="{y}" width="{_n(p.w)}" height="{_n(p.h)}" fill="{p.fill}"/>'


def _label(p: PlacedNode, lines: list[str], size: float) -> str:
    colour = theme.MUTED if p.kind in MARKER_KINDS else text_on(p.fill)
    top = p.y - (len(lines) - 1) * size * 1.2 / 2 + MIDDLE * size
    spans = "".join(f'<tspan x="{_n(p.x)}" y="{_n(top + i * size * 1.2)}">{html.escape(line)}</tspan>'
                    for i, line in enumerate(lines))
    return f'<text fill="{colour}" font-size="{_n(size)}">{spans}</text>'


def _frames(picture: Picture, labels: bool) -> list[str]:
    parts = []
    for f in picture.frames:
        parts.append(f'<rect class="pf" x="{_n(f.x)}" y="{_n(f.y)}" width="{_n(f.w)}" height="{_n(f.h)}"/>')
        label = str(f.label)  # in the language spoken now
        if label and labels:
            # Squeezed into the frame as the view's fillText(maxWidth) squeezes it.
            room = f.w - 8
            fit = (f' textLength="{_n(room)}" lengthAdjust="spacingAndGlyphs"'
                   if len(label) * CHAR_W > room else "")
            parts.append(f'<text class="pc" x="{_n(f.x + 4)}" y="{_n(f.y + 3 + TOP * FONT_PT)}"{fit}>'
                         f"{html.escape(label)}</text>")
    return parts


def _edges(picture: Picture, index: dict[str, PlacedNode], recurrent: bool) -> list[str]:
    """One path of lines and one of arrow heads for the edges of one kind."""
    lines, heads = [], []
    for e in picture.edges:
        a, b = index.get(e.src), index.get(e.dst)
        if a is None or b is None or e.recurrent != recurrent:
            continue
        dx, dy = b.x - a.x, b.y - a.y
        ax, ay = _clip(a.x, a.y, a.w / 2, a.h / 2, dx, dy)
        bx, by = _clip(b.x, b.y, b.w / 2, b.h / 2, -dx, -dy)
        length = math.hypot(bx - ax, by - ay)
        if length == 0:
            continue
        lines.append(f"M{_n(ax)} {_n(ay)}L{_n(bx)} {_n(by)}")
        ux, uy = (bx - ax) / length, (by - ay) / length
        s = min(ARROW_PT, length / 3)
        side_x, side_y = -uy * s * 0.45, ux * s * 0.45
        heads.append(f"M{_n(bx)} {_n(by)}L{_n(bx - ux * s + side_x)} {_n(by - uy * s + side_y)}"
                     f"L{_n(bx - ux * s - side_x)} {_n(by - uy * s - side_y)}Z")
    if not lines:
        return []
    return [f'<path class="{"pr" if recurrent else "pe"}" d="{"".join(lines)}"/>',
            f'<path class="{"phr" if recurrent else "pha"}" d="{"".join(heads)}"/>']


def drawing(picture: Picture, scale: float) -> str:
    """Frames, edges, boxes and labels as SVG elements in the picture's points, labelled as
    the view labels them at ``scale`` px per point: below 6 px a label keeps its first line
    (the op), sized to the box, or goes."""
    labels = FONT_PT * scale >= LABEL_MIN_PX
    index = {p.id: p for p in picture.nodes}
    parts = [*_frames(picture, labels), *_edges(picture, index, False), *_edges(picture, index, True)]
    parts.extend(_box(p) for p in picture.nodes)
    smallest = min((p.h for p in picture.nodes), default=20.0)
    if labels:
        parts.extend(_label(p, str(p.label).split("\n"), FONT_PT) for p in picture.nodes)
    elif smallest * scale >= SHORT_MIN_BOX_PX:
        size = min(smallest * 0.55, 9 / scale)
        parts.extend(_label(p, str(p.label).split("\n")[:1], size) for p in picture.nodes)
    return "".join(parts)


def _about(picture: Picture) -> str:
    """The drawing's name for a screen reader, in the language spoken now."""
    counts = picture.counts
    nodes = later_n("{n} node", "{n} nodes", counts.nodes)
    edges = later_n("{n} edge", "{n} edges", counts.edges)
    if picture.view == "rolled":
        return html.escape(tr("Autograd graph: {nodes}, {edges}, drawn rolled", nodes=nodes, edges=edges))
    return html.escape(tr("Autograd graph: {nodes}, {edges}, drawn unrolled", nodes=nodes, edges=edges))


def poster_svg(picture: Picture, scale: float) -> str:
    """The picture as an <svg> element for a handout, in its own points (its viewBox), as the
    view draws it at `scale` px per point (``fit_scale``), at most twice its size."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="sd-graph" '
            f'viewBox="0 0 {_n(picture.width)} {_n(picture.height)}" preserveAspectRatio="xMidYMid meet" '
            f'role="img" aria-label="{_about(picture)}" '
            f'style="max-width: {_n(MAX_SCALE * picture.width + 2 * PAD_PX)}px; '
            f'max-height: {_n(MAX_SCALE * picture.height + 2 * PAD_PX)}px">'
            f"{drawing(picture, scale)}</svg>")


def svg_file(picture: Picture) -> str:
    """The picture as an SVG file of its own at 1 px per point, on white (``GraphWidget.save``
    with a ``.svg`` name): for slides and documents, no Graphviz needed."""
    w, h = math.ceil(picture.width + 2 * PAD_PX), math.ceil(picture.height + 2 * PAD_PX)  # nothing clipped
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="sd-graph" width="{_n(w)}" height="{_n(h)}" '
            f'viewBox="{-PAD_PX} {-PAD_PX} {_n(w)} {_n(h)}" role="img" aria-label="{_about(picture)}">'
            f"<style>{shapes(FONT_FAMILY)}</style>"
            f'<rect x="{-PAD_PX}" y="{-PAD_PX}" width="{_n(w)}" height="{_n(h)}" fill="#FFFFFF"/>'
            f"{drawing(picture, 1.0)}</svg>\n")


def thumbnail_svg(picture: Picture, ringed: Iterable[str], width_px: int, height_px: int) -> str:
    """A graph small, as an SVG file of its own, ``width_px`` by ``height_px``: the picture
    fitted (labels only where readable, as the view draws them), the boxes whose ids are in
    ``ringed`` ringed in compare mode's colour for what one graph adds to another. A
    gallery's tile: its shape at a glance, and where it differs."""
    ringed = set(ringed)
    scale = min((width_px - 4) / max(picture.width, 1), (height_px - 4) / max(picture.height, 1), MAX_SCALE)
    gap, line = 2.5 / scale, 2.5 / scale
    rings = "".join(f'<rect x="{_n(p.x - p.w / 2 - gap)}" y="{_n(p.y - p.h / 2 - gap)}" '
                    f'width="{_n(p.w + 2 * gap)}" height="{_n(p.h + 2 * gap)}"/>'
                    for p in picture.nodes if p.id in ringed)
    ring_group = (f'<g fill="none" stroke="{theme.GREEN}" stroke-width="{_n(line)}">{rings}</g>'
                  if rings else "")
    ox = (width_px / scale - picture.width) / 2
    oy = (height_px / scale - picture.height) / 2
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="sd-graph" width="{width_px}" '
            f'height="{height_px}" viewBox="{_n(-ox)} {_n(-oy)} {_n(width_px / scale)} '
            f'{_n(height_px / scale)}" role="img" aria-label="{_about(picture)}">'
            f"<style>{shapes(FONT_FAMILY)}</style>{drawing(picture, scale)}{ring_group}</svg>")


def poster_html(picture: Picture, width_px: float, most_px: int) -> str:
    """The poster in its box, sized as the view sizes its canvas on a page `width_px` wide;
    empty for a picture with no boxes or more than ``MAX_BOXES``.

    The box's height follows the page's width as the view's does (container query units).
    """
    if not picture.nodes or len(picture.nodes) > MAX_BOXES:
        return ""
    scale = fit_scale(picture, width_px, box_height(picture, width_px, most_px))
    ratio = picture.height / max(picture.width, 1)
    height = (f"clamp(260px, min(calc((100cqw - {2 * PAD_PX}px) * {ratio:.6f} + {2 * PAD_PX}px), "
              f"{_n(MAX_SCALE * picture.height + 2 * PAD_PX)}px), {most_px}px)")
    return (f'<div class="hd-poster" data-testid="graph-poster" style="height: {height}">'
            f"{poster_svg(picture, scale)}</div>")
