"""The graph view in a real browser against the real app: slider to graph, pan and zoom, replay.

    python bench/bench_browser.py [--moves 7] [--frames 12]

Starts `streamlit run app.py` on a free loopback port and opens the Playground in
headless Chromium (software rendering). Three measures, medians printed:

- slider move -> new graph drawn: ArrowRight/ArrowLeft on the stage's sequence-length
  slider, timed until the graph view has drawn the new picture (its
  ``data-drawn-graph`` takes the new picture's key). Every move is to a T not
  seen before, so each one runs the model, captures, lays out and draws cold;
- pan and zoom, one frame: wheel and drag events dispatched on the canvas,
  timed in the page from the event to the end of the frame it caused
  (``data-drawn-at``), at T 200, L 4, nn.GRU unrolled (11,248 nodes), from the
  whole graph in view down to readable labels;
- replay: frames drawn per second while Record and Backward play, default config.

Targets (issue 13): slider <= 0.5 s at the default config and <= 1.5 s unrolled
at T 200, L 4, nn.GRU; pan/zoom <= 100 ms a frame; replay >= 20 frames a second.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from playwright.sync_api import sync_playwright  # noqa: E402

from harness.drive import VIEW, wait_for_run  # noqa: E402
from harness.helpers import CHROMIUM, CHROMIUM_ARGS, free_port, start_server  # noqa: E402
from stockdemo.config import KNOBS  # noqa: E402

LARGEST = {"seq_len": 200, "num_layers": 4, "cell": "gru", "view": "unrolled"}
MAXIMAL = {name: KNOBS[name].high for name in
           ("seq_len", "hidden_size", "num_layers", "batch_size", "input_size")}
SLIDER_CASES = {
    "default (T 5, rnn)": ({}, "ArrowRight"),
    "default, share panel open (no plotly redraw)": ({"panel": "Share this run"}, "ArrowRight"),
    "T 200, L 4, gru, unrolled (11,248 nodes)": (LARGEST, "ArrowLeft"),
    "maximal (H 256, B 64), gru, unrolled": ({**MAXIMAL, "cell": "gru", "view": "unrolled"},
                                             "ArrowLeft"),
    "maximal, rnn, auto (rolled)": (MAXIMAL, "ArrowLeft"),
}

# One input event on the canvas, timed in the page until the frame it caused is drawn.
FRAME_AFTER = """async ([kind, dx, dy]) => {
  const view = [...document.querySelectorAll('*')]  // the view lives in its component's shadow root
    .map(e => e.shadowRoot && e.shadowRoot.querySelector("[data-testid='graph-view']")).find(Boolean);
  const canvas = view.querySelector('canvas');
  const r = canvas.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const draws = +view.dataset.draws;
  const t0 = performance.now();
  if (kind === 'wheel') {
    canvas.dispatchEvent(new WheelEvent('wheel', {deltaY: dy, deltaMode: 0, clientX: x, clientY: y,
      bubbles: true, cancelable: true, view: window}));
  } else {
    const opts = (cx, cy) => ({clientX: cx, clientY: cy, bubbles: true, cancelable: true, view: window,
      button: 0, buttons: 1});
    canvas.dispatchEvent(new MouseEvent('mousedown', opts(x, y)));
    window.dispatchEvent(new MouseEvent('mousemove', opts(x + dx, y + dy)));
    window.dispatchEvent(new MouseEvent('mouseup', opts(x + dx, y + dy)));
  }
  while (+view.dataset.draws === draws) await new Promise(r => setTimeout(r, 1));
  return [parseFloat(view.dataset.drawnAt) - t0, parseFloat(view.dataset.scale), +view.dataset.drawMs];
}"""


def open_playground(page, base: str, params: dict) -> object:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    page.goto(f"{base}/playground?{query}")
    wait_for_run(page)
    view = page.locator(VIEW)
    page.wait_for_selector(f"{VIEW}[data-drawn-graph]", timeout=120_000)
    view.scroll_into_view_if_needed()
    return view


def slider_moves(page, base: str, params: dict, key: str, moves: int) -> list[float]:
    view = open_playground(page, base, params)
    thumb = page.get_by_role("slider", name="Sequence length T")  # on the stage
    times = []
    for _ in range(moves):
        before = view.get_attribute("data-drawn-graph")
        thumb.focus()
        t0 = time.perf_counter()
        thumb.press(key)
        page.wait_for_function(
            "([sel, old]) => { const v = [...document.querySelectorAll('*')].map(e => e.shadowRoot"
            " && e.shadowRoot.querySelector(sel)).find(Boolean);"
            " return v && v.dataset.drawnGraph !== old; }",
            arg=[VIEW, before], polling=10, timeout=120_000)
        times.append(time.perf_counter() - t0)
        wait_for_run(page)
    return times


def pan_and_zoom(page, base: str, frames: int) -> dict[str, list[float]]:
    view = open_playground(page, base, LARGEST)
    nodes = view.get_attribute("data-nodes")
    out: dict[str, list[float]] = {}
    zoom_in = [page.evaluate(FRAME_AFTER, ["wheel", 0, -200]) for _ in range(frames)]
    out[f"zoom in from the whole graph ({nodes} nodes), scale {zoom_in[0][1]:.3f}"
        f"..{zoom_in[-1][1]:.2f}"] = [t for t, _, _ in zoom_in]
    out["pan, labels readable"] = [page.evaluate(FRAME_AFTER, ["drag", 40, 15])[0]
                                   for _ in range(frames)]
    zoom_out = [page.evaluate(FRAME_AFTER, ["wheel", 0, 200]) for _ in range(frames)]
    out["zoom out to the whole graph"] = [t for t, _, _ in zoom_out]
    out["pan, the whole graph in view"] = [page.evaluate(FRAME_AFTER, ["drag", 40, 15])[0]
                                           for _ in range(frames)]
    return out


def replay_fps(page, base: str, seconds: float = 3.0) -> dict[str, float]:
    view = open_playground(page, base, {})
    page.get_by_text("Replay this run").click()
    wait_for_run(page)
    out = {}
    for mode in ("forward", "backward"):
        view.locator(f"[data-act={mode}]").click()
        view.locator(".gv-speed").select_option("10")  # 30-ish frames: longer than the window
        view.locator(f"[data-act={mode}]").click()  # restart at the new speed
        d0, t0 = int(view.get_attribute("data-draws")), time.perf_counter()
        time.sleep(seconds)
        d1, t1 = int(view.get_attribute("data-draws")), time.perf_counter()
        out[mode] = (d1 - d0) / (t1 - t0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--moves", type=int, default=7)
    parser.add_argument("--frames", type=int, default=12)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures are noisy above ~2)")
    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            print(f"\nslider move -> new graph drawn (n={args.moves} cold moves)")
            print(f"{'config':<48}{'median s':>10}{'max s':>8}")
            for name, (params, key) in SLIDER_CASES.items():
                t = slider_moves(page, base, params, key, args.moves)
                print(f"{name:<48}{statistics.median(t):>10.2f}{max(t):>8.2f}")
            print(f"\npan and zoom, event to frame drawn (n={args.frames} frames each)")
            print(f"{'gesture':<60}{'median ms':>10}{'max ms':>8}")
            for name, t in pan_and_zoom(page, base, args.frames).items():
                print(f"{name:<60}{statistics.median(t):>10.1f}{max(t):>8.1f}")
            print("\nreplay at the default config, frames drawn a second")
            for mode, fps in replay_fps(page, base).items():
                print(f"{mode:<48}{fps:>10.1f}")
            browser.close()
    finally:
        server.terminate()
    print(f"\nload average {os.getloadavg()[0]:.1f}")
    print("targets: slider default <= 0.5 s, T 200 L 4 gru unrolled <= 1.5 s; "
          "pan/zoom <= 100 ms a frame; replay >= 20 frames a second (medians)")


if __name__ == "__main__":
    main()
