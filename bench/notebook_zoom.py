"""The notebook widget at the largest graphs: frame time while zooming, in JupyterLab.

    python bench/notebook_zoom.py [--frames 12] [--only TEXT]

Starts JupyterLab (harness.notebooks.py), runs a notebook whose cells call
``stockdemo.show`` on large graphs, and for each widget dispatches wheel events on its
canvas, zooming in from the whole graph and back out. Printed per graph: the time from
the call to the payload in Python (``show``, in the kernel), the boxes drawn of the
graph's nodes, and per zoom frame the time the view spent drawing (its ``data-draw-ms``:
median, 90th percentile, the slowest and the zoom scale it was drawn at) and the time from
the wheel event to the end of the frame it caused (median, slowest).
Headless Chromium draws in software here: a laptop's GPU does better.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from playwright.sync_api import sync_playwright  # noqa: E402

from harness.helpers import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from harness.notebooks import jupyterlab, open_notebook, run_cell, write_notebook  # noqa: E402

SETUP = """\
import json, time
import torch
from torch import nn
import stockdemo
from stockdemo.model import StockPredictor

class Loop(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 8)
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], 8)
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
        return self.fc(h)

def encoder(layers):
    layer = nn.TransformerEncoderLayer(16, 2, 32, 0.0, batch_first=True)
    return nn.Sequential(nn.TransformerEncoder(layer, layers, enable_nested_tensor=False), nn.Linear(16, 1))

def timed(name, model, x, view):
    t = time.perf_counter()
    w = stockdemo.show(model, x, view=view, height=700)
    print(json.dumps({"show_s": time.perf_counter() - t, "boxes": len(w.run.picture.nodes),
                      "nodes": w.run.picture.counts.nodes}))
    return w
"""

CASES = {  # name -> (model, input, view)
    "nn.GRU T 1000, 4 layers (StockPredictor), unrolled":
        ("StockPredictor(3, 10, 4, 1, cell='gru')", "torch.randn(10, 1000, 3)", "unrolled"),
    "nn.GRU T 1000, 4 layers (StockPredictor), auto":
        ("StockPredictor(3, 10, 4, 1, cell='gru')", "torch.randn(10, 1000, 3)", "auto"),
    "RNNCell loop T 9500 (any model), unrolled": ("Loop()", "torch.randn(4, 9500, 3)", "unrolled"),
    "RNNCell loop T 9500 (any model), auto": ("Loop()", "torch.randn(4, 9500, 3)", "auto"),
    "TransformerEncoder 12 layers (any model), auto": ("encoder(12)", "torch.randn(2, 12, 16)", "auto"),
}

# One wheel event on widget i's canvas, timed in the page until the frame it caused is drawn.
FRAME_AFTER = """async ([i, dy]) => {
  const view = document.querySelectorAll('.jp-OutputArea .gv')[i];
  const canvas = view.querySelector('canvas');
  const r = canvas.getBoundingClientRect();
  const draws = +view.dataset.draws;
  const t0 = performance.now();
  canvas.dispatchEvent(new WheelEvent('wheel', {deltaY: dy, deltaMode: 0, clientX: r.left + r.width / 2,
    clientY: r.top + r.height / 2, bubbles: true, cancelable: true, view: window}));
  while (+view.dataset.draws === draws) await new Promise(r => setTimeout(r, 1));
  return [parseFloat(view.dataset.drawnAt) - t0, +view.dataset.drawMs, +view.dataset.scale];
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=12, help="wheel steps each way")
    parser.add_argument("--only", default="", help="the graphs whose name holds this text")
    args = parser.parse_args()
    cases = {name: case for name, case in CASES.items() if args.only in name}
    cells = [SETUP] + [f"timed({name!r}, {model}, {x}, {view!r})" for name, (model, x, view) in cases.items()]
    with tempfile.TemporaryDirectory() as tmp, jupyterlab(Path(tmp)) as url, sync_playwright() as p:
        write_notebook(Path(tmp) / "big.ipynb", cells)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        open_notebook(page, url, "big.ipynb")
        run_cell(page, 0)
        print(f"{'graph':52} {'show':>7} {'boxes / nodes':>17} {'draw ms p50':>11} {'p90':>6} {'max':>6}"
              f" {'at scale':>8} {'event->frame p50':>16} {'max':>6}")
        for i, name in enumerate(cases):
            out = run_cell(page, i + 1, timeout=900_000)
            fact = json.loads(out.strip().splitlines()[0])
            view = page.locator(".jp-OutputArea .gv").nth(i)
            view.locator("canvas").wait_for(timeout=120_000)
            page.wait_for_function("i => document.querySelectorAll('.jp-OutputArea .gv')[i]"
                                   ".dataset.drawnGraph", arg=i, timeout=120_000)
            view.scroll_into_view_if_needed()
            frames = [page.evaluate(FRAME_AFTER, [i, -200]) for _ in range(args.frames)]
            frames += [page.evaluate(FRAME_AFTER, [i, 200]) for _ in range(args.frames)]
            size = f"{fact['boxes']:,} / {fact['nodes']:,}"
            draw = [d for _, d, _ in frames]
            event = [e for e, _, _ in frames]
            worst = max(frames, key=lambda f: f[1])
            print(f"{name:52} {fact['show_s']:6.1f}s {size:>17} {statistics.median(draw):11.1f}"
                  f" {statistics.quantiles(draw, n=10)[-1]:6.1f} {worst[1]:6.1f} {worst[2]:8.3f}"
                  f" {statistics.median(event):16.1f} {max(event):6.1f}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
