"""Core speed: run, capture and DOT per cell and size, and the browser's layout time.

    python bench/bench_core.py [--repeats 7] [--no-browser]

Prints medians in ms. Targets (issue 2): capture + DOT <= 30 ms at the default
config, <= 150 ms at T 200 L 4 GRU; browser layout <= 1 s for every view the
app shows by default ("auto"). Issue 13: the full unrolled picture (every node,
``layout(..., max_nodes=None)``) well under 150 ms at T 200 L 4 for GRU and the
loop LSTM; the replay (``trace_run``) at the default config and at T 200 L 4.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

import torch  # noqa: E402

from harness.helpers import ROOT  # noqa: E402
from stockdemo.cells import CELLS  # noqa: E402
from stockdemo.config import RunConfig  # noqa: E402
from stockdemo.graph.capture import capture_graph  # noqa: E402
from stockdemo.layout.steps import layout  # noqa: E402
from stockdemo.live.run import build  # noqa: E402
from stockdemo.render.dot import render_dot  # noqa: E402
from stockdemo.replay.model import trace_run  # noqa: E402

SIZES = ((5, 1), (50, 3), (200, 4))


def median_ms(fn, repeats: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), value


def core_table(repeats: int) -> list[dict]:
    rows = []
    for cell in CELLS:
        for seq_len, layers in SIZES:
            config = RunConfig(seq_len=seq_len, num_layers=layers, cell=cell)
            x, model = build(config)
            run_ms, out = median_ms(lambda: model(x), repeats)  # noqa: B023
            cap_ms, graph = median_ms(lambda: capture_graph(out, model, x), repeats)  # noqa: B023
            # a fresh copy each time: its derived adjacency is built inside the timing
            dot_ms, rendering = median_ms(
                lambda: render_dot(dataclasses.replace(graph), "auto"), repeats)  # noqa: B023
            rows.append(dict(cell=cell, T=seq_len, L=layers, run=run_ms, capture=cap_ms, dot=dot_ms,
                             nodes=graph.stats["nodes"], drawn=rendering.drawn_nodes,
                             view=rendering.view, rendering=rendering))
    return rows


def wall_and_cpu_ms(fn, repeats: int) -> tuple[float, float, object]:
    """Medians of wall time and of this process's CPU time: the CPU figure
    stays meaningful when other processes share the cores."""
    walls, cpus, value = [], [], None
    for _ in range(repeats):
        value = None  # free the last result outside the timing
        w, c = time.perf_counter(), time.process_time()
        value = fn()
        walls.append((time.perf_counter() - w) * 1e3)
        cpus.append((time.process_time() - c) * 1e3)
    return statistics.median(walls), statistics.median(cpus), value


def full_picture_and_replay(repeats: int) -> None:
    """Layout of every node (the interactive view), and the replay, at the sizes issue 13 names."""
    print(f"\nfull unrolled picture (max_nodes=None) and replay, load {os.getloadavg()[0]:.1f}")
    for cell in ("gru", "lstm_loop"):
        config = RunConfig(seq_len=200, num_layers=4, cell=cell)
        x, model = build(config)
        graph = capture_graph(model(x), model, x)
        # a fresh copy each time: its derived adjacency is built inside the timing
        wall, cpu, picture = wall_and_cpu_ms(
            lambda: layout(dataclasses.replace(graph), "unrolled", None), repeats)  # noqa: B023
        print(f"layout, every node, T200 L4 {cell:<10}{len(picture.nodes):>6} nodes "
              f"{len(picture.edges):>6} edges {wall:7.1f} ms ({cpu:.1f} ms CPU; target well under 150)")
    for config in (RunConfig(), RunConfig(seq_len=200, num_layers=4, cell="gru")):
        wall, cpu, trace = wall_and_cpu_ms(lambda: trace_run(config), max(1, repeats // 2))  # noqa: B023
        print(f"trace_run {config.cell} T{config.seq_len} L{config.num_layers}: "
              f"{len(trace.forward)} ops replayed {wall:7.1f} ms ({cpu:.1f} ms CPU)")


def browser_layout(rows: list[dict], repeats: int) -> dict[tuple, float]:
    """Median click -> SVG drawn, through st.graphviz_chart in headless Chromium."""
    from playwright.sync_api import sync_playwright

    from harness.drive import wait_for_run
    from harness.helpers import CHROMIUM, CHROMIUM_ARGS, free_port

    probe_dir = Path(tempfile.mkdtemp(prefix="stockdemo-probe-"))
    for r in rows:
        (probe_dir / f"{r['cell']}_{r['T']}_{r['L']}.dot").write_text(r["rendering"].dot)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "bench" / "layout_probe.py"),
         "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"],
        env={**os.environ, "STOCKDEMO_PROBE_DIR": str(probe_dir)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = {}
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for r in rows:
                name = f"{r['cell']}_{r['T']}_{r['L']}.dot"
                expected = r["rendering"].dot.count("pos=")
                times = []
                for _ in range(repeats):
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    page.goto(f"http://127.0.0.1:{port}/?dot={name}")
                    # the warm-up graph is drawn: Graphviz's WASM is loaded
                    wait_for_run(page, ready="[data-testid='stGraphVizChart'] svg g.node")
                    t0 = time.perf_counter()
                    page.get_by_role("button", name="draw").click()
                    page.wait_for_function(
                        "n => document.querySelectorAll("
                        "\"[data-testid='stGraphVizChart'] svg g.node\").length >= n",
                        arg=expected + 2, polling=10, timeout=120_000)
                    times.append((time.perf_counter() - t0) * 1e3)
                    page.close()
                results[(r["cell"], r["T"], r["L"])] = statistics.median(times)
            browser.close()
    finally:
        proc.terminate()
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--browser-repeats", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--picture-only", action="store_true",
                        help="only the full picture's layout and the replay (issue 13)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as on the server
    print(f"torch {torch.__version__}, 1 thread, medians of {args.repeats}")
    if args.picture_only:
        full_picture_and_replay(args.repeats)
        return
    rows = core_table(args.repeats)
    browser = {} if args.no_browser else browser_layout(rows, args.browser_repeats)
    header = (f"{'cell':<10}{'T':>4}{'L':>3}{'nodes':>7}  {'run ms':>7}{'capture':>9}{'DOT':>7}"
              f"{'cap+DOT':>9}  {'view':<9}{'drawn':>6}{'browser ms':>12}")
    print(header)
    print("-" * len(header))
    for r in rows:
        b = browser.get((r["cell"], r["T"], r["L"]))
        print(f"{r['cell']:<10}{r['T']:>4}{r['L']:>3}{r['nodes']:>7}  {r['run']:>7.1f}{r['capture']:>9.1f}"
              f"{r['dot']:>7.1f}{r['capture'] + r['dot']:>9.1f}  {r['view']:<9}{r['drawn']:>6}"
              f"{'' if b is None else f'{b:.0f}':>12}")
    default = next(r for r in rows if r["cell"] == "rnn" and r["T"] == 5)
    gru_max = next(r for r in rows if r["cell"] == "gru" and r["T"] == 200)
    print(f"\ntarget capture+DOT <= 30 ms at the default: {default['capture'] + default['dot']:.1f} ms")
    print(f"target capture+DOT <= 150 ms at T200 L4 GRU: {gru_max['capture'] + gru_max['dot']:.1f} ms")
    if browser:
        worst = max(browser.values())
        print(f"target browser layout <= 1000 ms for every default view: worst {worst:.0f} ms")
    full_picture_and_replay(args.repeats)


if __name__ == "__main__":
    main()
