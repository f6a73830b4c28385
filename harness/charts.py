"""Reading plotly charts back from the browser: where their words are drawn, and what they cover.

``chart_layouts(page)`` measures every plotly chart on screen as drawn: its
box, and the boxes of its title, legend, axis titles, colour bar, annotations
and (when shown) plotly's mode bar, in CSS pixels; and, for each annotation,
the points of the data lines drawn under its text. ``collisions`` turns that
into one sentence per problem: two boxes that intersect, a box that sticks
out of its chart, a label printed over a line.
"""

from __future__ import annotations

from itertools import combinations

# One function, run in the page. Plotly's SVG: the title is text.gtitle (its subtitle
# text.gtitle-subtitle), axis titles
# text.xtitle / text.y2title ..., the legend g.legend (its rect.bg), annotations
# g.annotation, a colour bar g.colorbar; the mode bar is an HTML div.
CHART_LAYOUTS_JS = r"""
() => {
  const box = e => { const r = e.getBoundingClientRect();
                     return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const shown = e => {
    if (!e) return false;
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
      const s = getComputedStyle(n);
      if (s.display === 'none' || s.visibility === 'hidden' || parseFloat(s.opacity) === 0) return false;
    }
    return true;
  };
  const words = e => e.tagName.toLowerCase() !== 'text' || e.textContent.trim().length > 0;
  return [...document.querySelectorAll('.js-plotly-plot')].filter(shown).map(plot => {
    const parts = [];
    const add = (kind, e, text) => { if (shown(e) && words(e)) parts.push({kind, text, ...box(e)}); };
    const title = plot.querySelector('.infolayer .gtitle');
    if (title) add('title', title, title.textContent);
    const subtitle = plot.querySelector('.infolayer .gtitle-subtitle');
    if (subtitle) add('subtitle', subtitle, subtitle.textContent);
    plot.querySelectorAll('.infolayer text[class$="title"]').forEach(t => {
      const kind = t.getAttribute('class');
      if (!kind.startsWith('gtitle') && !t.closest('.colorbar')) add(kind, t, t.textContent);
    });
    const legend = plot.querySelector('.infolayer .legend');
    if (legend) add('legend', legend.querySelector('rect.bg') || legend, legend.textContent);
    plot.querySelectorAll('.infolayer .colorbar').forEach(c => add('colorbar', c, c.textContent));
    const lines = [];
    plot.querySelectorAll('.scatterlayer .trace').forEach(trace => {
      if (!shown(trace)) return;
      trace.querySelectorAll('path.js-line').forEach(path => {
        const total = path.getTotalLength();
        const ctm = path.getScreenCTM();
        if (!total || !ctm) return;
        const points = [];
        const step = Math.max(1, total / 600);
        for (let at = 0; at <= total; at += step) {
          const p = path.getPointAtLength(at);
          points.push([ctm.a * p.x + ctm.c * p.y + ctm.e, ctm.b * p.x + ctm.d * p.y + ctm.f]);
        }
        lines.push(points);
      });
    });
    plot.querySelectorAll('.annotation').forEach(a => {
      const text = a.querySelector('.annotation-text') || a;
      if (!shown(text)) return;
      const b = box(text);
      const over = lines.some(points => points.some(([x, y]) =>
        x > b.left + 1 && x < b.right - 1 && y > b.top + 1 && y < b.bottom - 1));
      parts.push({kind: 'annotation', text: a.textContent, over_line: over, ...b});
    });
    const modebar = plot.querySelector('.modebar');
    if (modebar) add('modebar', modebar, '');
    const name = title ? title.textContent : 'an untitled chart';
    return {name, ...box(plot), parts};
  });
}
"""


def chart_layouts(page) -> list[dict]:
    """Every plotly chart drawn on ``page`` (see CHART_LAYOUTS_JS), as measured now."""
    return page.evaluate(CHART_LAYOUTS_JS)


def show_mode_bars(page) -> None:
    """Hover each chart in turn, so plotly shows its mode bar (a tap does the same on a phone).

    Only the hovered chart shows one: each chart is measured while hovered, by the caller.
    """
    for chart in page.locator(".js-plotly-plot").all():
        if chart.is_visible():
            chart.hover(position={"x": 5, "y": 5})


def overlap(a: dict, b: dict, slack: float = 1.0) -> bool:
    """Do two boxes intersect by more than ``slack`` pixels each way?"""
    return (min(a["right"], b["right"]) - max(a["left"], b["left"]) > slack
            and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > slack)


def collisions(charts: list[dict], slack: float = 1.0) -> list[str]:
    """What a reader could not read on these charts: one sentence per problem."""
    problems = []
    for chart in charts:
        name = chart["name"] or "a chart"
        for part in chart["parts"]:
            sticks = (part["left"] < chart["left"] - slack or part["right"] > chart["right"] + slack
                      or part["top"] < chart["top"] - slack or part["bottom"] > chart["bottom"] + slack)
            if sticks:
                problems.append(f"{name!r}: its {part['kind']} {part['text']!r} sticks out of the chart")
            if part.get("over_line"):
                problems.append(f"{name!r}: the annotation {part['text']!r} is printed over a data line")
        for a, b in combinations(chart["parts"], 2):
            if overlap(a, b, slack):
                problems.append(f"{name!r}: its {a['kind']} {a['text']!r} overlaps its {b['kind']} "
                                f"{b['text']!r}")
    return problems
