"""Zoom frames of the graph view at 50,000 nodes and more: the real frame time, in Chromium.

    python bench/bench_zoom.py [--cases gru,loop] [--frames 20] [--rebuild]

Two graphs past 50,000 nodes, every node drawn (view "unrolled"):

- ``gru``: StockPredictor on nn.GRU, T 1,000, 4 layers (56,048 nodes), steps x layers;
- ``loop``: an nn.GRUCell in a Python ``for`` loop, T 3,200 (any model: the general
  layout, ``stockdemo.notebook.record``).

Each picture is made once and kept in artifacts/zoom/ (``--rebuild`` makes it again); the
page is the handout's view (the built handout.js and CSS, the payload inline, no table),
1440x900, opened from disk in headless Chromium with the repository's flags (no GPU: the
canvas is rasterised by Skia on the CPU, WebGL would be SwiftShader's).

At three places (the whole graph fitted; "midway", boxes about 3 px tall; "zoomed in",
labels readable), ``--frames`` wheel events zoom in then as many out, one per animation
frame, twice:

- forced: after each frame the view drew, one pixel is read back (getImageData), which
  waits until the canvas has rasterised the frame's commands. ``frame ms`` is the view's
  own draw time (``data-draw-ms``, JavaScript) plus that read-back: the frame's real cost;
- free: the gaps between animation frames (requestAnimationFrame), as a learner's screen
  gets them; 16.7 ms is one frame at 60 Hz, the least a gap can be.

Then the frame the view draws once the wheel has stopped (``settle ms``: draw + raster).
All of it ``--repeat`` times. Printed: median / 95th percentile / slowest, in ms.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

import torch  # noqa: E402
from torch import nn  # noqa: E402

from harness.drive import VIEW  # noqa: E402
from harness.helpers import ROOT  # noqa: E402
from stockdemo.layout.picture import Picture  # noqa: E402
from stockdemo.render.handout import SCRIPT, STYLE, _inline_json, _inline_script, theme_variables  # noqa: E402
from stockdemo.render.payload import view_json  # noqa: E402

KEEP = ROOT / "artifacts" / "zoom"
HEIGHT = 760  # px: the view's box, as a notebook widget or a handout gives it


class GRULoop(nn.Module):
    """An nn.GRUCell over the steps in a Python loop. x: (batch, T, 3) -> (batch, 1)"""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 8)
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], 8)
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
        return self.fc(h)


def picture_gru() -> Picture:
    from stockdemo.cells import recurrent_layer
    from stockdemo.model import StockPredictor
    from stockdemo.notebook.record import record

    return record(StockPredictor(3, 10, 4, 1, rnn=recurrent_layer("gru")), torch.randn(10, 1000, 3),
                  view="unrolled").picture


def picture_loop() -> Picture:
    from stockdemo.notebook.record import record

    return record(GRULoop(), torch.randn(4, 3200, 3), view="unrolled").picture


CASES = {"gru": ("nn.GRU T 1000, 4 layers (steps x layers)", picture_gru),
         "loop": ("GRUCell loop T 3200 (general layout)", picture_loop)}


def picture_of(name: str, rebuild: bool) -> Picture:
    path = KEEP / f"{name}.pickle"
    if path.exists() and not rebuild:
        return pickle.loads(path.read_bytes())
    torch.manual_seed(0)
    started = time.perf_counter()
    picture = CASES[name][1]()
    print(f"{name}: recorded and laid out in {time.perf_counter() - started:.1f} s", flush=True)
    KEEP.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(picture))
    return picture


def page_html(picture: Picture) -> str:
    """The handout's view of ``picture`` with nothing else on the page."""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<style>{theme_variables()} body {{ margin: 0; }}</style><style>{STYLE.read_text(encoding="utf-8")}</style>
</head><body><div id="graph"></div>
<script type="application/json" id="stockdemo-data">{_inline_json(view_json(picture, height=HEIGHT))}</script>
<script>{_inline_script(SCRIPT.read_text(encoding="utf-8"))}</script></body></html>"""


# Zoom by 2**(-deltaY * 0.002) about the canvas's centre (d3-zoom's wheel), as one event.
WHEEL = """([dy]) => {
  const c = document.querySelector("[data-testid='graph-view'] canvas"), r = c.getBoundingClientRect();
  c.dispatchEvent(new WheelEvent('wheel', {deltaY: dy, deltaMode: 0, clientX: r.left + r.width / 2,
    clientY: r.top + r.height / 2, bubbles: true, cancelable: true, view: window}));
}"""

# Wheel events one per frame, in then out. Forced: each frame's raster waited for.
ZOOM = """async ([frames, delta, flush]) => {
  const view = document.querySelector("[data-testid='graph-view']");
  const el = view.querySelector("canvas");
  const r = el.getBoundingClientRect();
  const ctx = el.getContext('2d');
  const raf = () => new Promise((done) => requestAnimationFrame(done));
  const gaps = [], cost = [], js = [];
  let last = await raf();
  for (let i = 0; i < frames * 2; i++) {
    const draws = +view.dataset.draws;
    el.dispatchEvent(new WheelEvent('wheel', {deltaY: i < frames ? -delta : delta, deltaMode: 0,
      clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true,
      view: window}));
    const now = await raf();
    gaps.push(now - last);
    last = now;
    if (!flush) continue;
    const drew = +view.dataset.draws !== draws ? +view.dataset.drawMs : 0;
    const t0 = performance.now();
    ctx.getImageData(0, 0, 1, 1);
    js.push(drew);
    cost.push(drew + performance.now() - t0);
    last = await raf();
  }
  return {gaps, cost, js};
}"""

# Once the wheel stops, the frame the view draws then (if any), with its raster.
SETTLE = """async () => {
  const view = document.querySelector("[data-testid='graph-view']");
  const ctx = view.querySelector("canvas").getContext('2d');
  const draws = +view.dataset.draws;
  const t0 = performance.now();
  while (+view.dataset.draws === draws && performance.now() - t0 < 1500) {
    await new Promise((r) => setTimeout(r, 5));
  }
  if (+view.dataset.draws === draws) return null;
  const t1 = performance.now();
  ctx.getImageData(0, 0, 1, 1);
  return +view.dataset.drawMs + performance.now() - t1;
}"""


PLACES = [("whole", "whole graph", None), ("mid", "midway (boxes ~3 px)", "mid"),
          ("in", "zoomed in (labels)", 1.0)]


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    q = statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]
    return f"{statistics.median(values):6.1f} / {q:6.1f} / {max(values):6.1f}"


def go_to(page, scale: float | None) -> float:
    """Fit the whole graph (key 0), then zoom about the centre to ``scale`` (None: stay)."""
    page.focus(f"{VIEW} canvas")
    page.keyboard.press("0")
    page.wait_for_timeout(400)
    if scale is not None:
        import math

        now = float(page.get_attribute(VIEW, "data-scale"))
        page.evaluate(WHEEL, [-500 * math.log2(scale / now)])
        page.wait_for_timeout(400)
    return float(page.get_attribute(VIEW, "data-scale"))


def measure(page, frames: int, delta: float, repeat: int) -> dict:
    """``repeat`` times: the zoom in and out, forced, its settling frame, then free."""
    out: dict = {"cost": [], "js": [], "gaps": [], "settle": []}
    for _ in range(repeat):
        forced = page.evaluate(ZOOM, [frames, delta, True])
        settle = page.evaluate(SETTLE)
        free = page.evaluate(ZOOM, [frames, delta, False])
        page.evaluate(SETTLE)
        out["cost"] += forced["cost"]
        out["js"] += forced["js"]
        out["gaps"] += free["gaps"]
        out["settle"] += [settle] if settle is not None else []
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--frames", type=int, default=20, help="wheel events each way")
    parser.add_argument("--delta", type=float, default=40, help="each event's deltaY (40: x1.057)")
    parser.add_argument("--places", default="whole,mid,in", help="where to zoom: whole, mid, in")
    parser.add_argument("--repeat", type=int, default=3, help="zooms in and out at each place")
    parser.add_argument("--rebuild", action="store_true", help="record and lay out the graphs again")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from harness.helpers import CHROMIUM, CHROMIUM_ARGS

    places = [(text, scale) for key, text, scale in PLACES if key in args.places.split(",")]
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        print(f"{'graph':44} {'place':22} {'scale':>7} {'frame ms (js + raster)':>24} {'js ms':>24}"
              f" {'rAF gap ms':>24} {'settle ms':>9}")
        for name in args.cases.split(","):
            picture = picture_of(name, args.rebuild)
            path = Path(tmp) / f"{name}.html"
            path.write_text(page_html(picture), encoding="utf-8")
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(path.as_uri())
            page.wait_for_selector(f"{VIEW}[data-drawn-graph]", timeout=120_000)
            min_h = min(n.h for n in picture.nodes)
            title = f"{CASES[name][0]}, {len(picture.nodes):,} boxes"
            for place, scale in places:
                k = go_to(page, 3 / min_h if scale == "mid" else scale)
                m = measure(page, args.frames, args.delta, args.repeat)
                settle = f"{statistics.median(m['settle']):9.1f}" if m["settle"] else f"{'none':>9}"
                print(f"{title:44} {place:22} {k:7.4f} {ms(m['cost']):>24} {ms(m['js']):>24}"
                      f" {ms(m['gaps']):>24} {settle}", flush=True)
            page.close()
        browser.close()
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} / {load[1]:.1f} on {os.cpu_count()} cores; settle ms: the median")


if __name__ == "__main__":
    main()
