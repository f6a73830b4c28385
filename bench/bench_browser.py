"""Slider change -> new graph drawn, in a real browser against the real app.

    python bench/bench_browser.py [--moves 7]

Starts `streamlit run app.py` on a free loopback port, opens the Playground in
headless Chromium, presses ArrowRight/ArrowLeft on the sequence-length slider
and times each key press until the graph on screen shows the new run (its
caption, drawn inside the SVG, changes). Every move is to a T not seen before,
so each one runs the model, captures and renders cold. Prints medians.
Targets (issue 3): <= 0.5 s at the default config, <= 1.5 s at the maximal one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from stockdemo.config import KNOBS  # noqa: E402
from tests.browser.drive import wait_for_run  # noqa: E402
from tests.helpers import CHROMIUM, CHROMIUM_ARGS, free_port, start_server  # noqa: E402

LABEL = "[data-testid='stGraphVizChart'] svg g.graph > text"
MAXIMAL = {name: KNOBS[name].high for name in
           ("seq_len", "hidden_size", "num_layers", "batch_size", "input_size")}
CASES = {
    "default (T 5, rnn)": ({}, "ArrowRight"),
    "default, code panel open (no plotly redraw)": ({"panel": "Code for this run"}, "ArrowRight"),
    "maximal (T 200, H 256, L 4, B 64, rnn)": (MAXIMAL, "ArrowLeft"),
    "maximal, gru": ({**MAXIMAL, "cell": "gru"}, "ArrowLeft"),
    "maximal, gru_loop": ({**MAXIMAL, "cell": "gru_loop"}, "ArrowLeft"),
}


def caption(page) -> str:
    return page.locator(LABEL).first.text_content() or ""


def measure(page, base: str, params: dict, key: str, moves: int) -> list[float]:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    page.goto(f"{base}/playground?{query}")
    wait_for_run(page)
    page.wait_for_selector(LABEL, timeout=60_000)
    thumb = page.locator("[data-testid='stSlider']").first.get_by_role("slider")
    times = []
    for _ in range(moves):
        before = caption(page)
        thumb.focus()
        t0 = time.perf_counter()
        thumb.press(key)
        page.wait_for_function(
            "([sel, old]) => { const e = document.querySelector(sel); "
            "return e && e.textContent !== old; }",
            arg=[LABEL, before], polling=10, timeout=60_000)
        times.append(time.perf_counter() - t0)
        wait_for_run(page)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--moves", type=int, default=7)
    args = parser.parse_args()
    port = free_port()
    server = start_server(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            print(f"{'config':<42}{'median s':>10}{'max s':>8}  (n={args.moves} moves, cold runs)")
            for name, (params, key) in CASES.items():
                t = measure(page, f"http://127.0.0.1:{port}", params, key, args.moves)
                print(f"{name:<42}{statistics.median(t):>10.2f}{max(t):>8.2f}")
            browser.close()
    finally:
        server.terminate()
    print("targets: default <= 0.5 s, maximal <= 1.5 s (medians)")


if __name__ == "__main__":
    main()
