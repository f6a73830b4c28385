"""Side by side with the anchors: torchviz, torchview, torchvista and stockdemo on the same six models.

    python bench/anchors.py [--models seed,gru] [--tools torchviz,stockdemo] [--timeout 120] [--frames 40]
                            [--repeat 3] [--opens 3]

The models are ``stockdemo.zoo.ZOO`` (the seed, a GRU at T 200 with 4 layers, a 6-layer
nn.TransformerEncoder, a residual CNN, an nn.LSTMCell loop, a data-dependent ``while``).
The three anchors come from PyPI into their own virtual environment
(artifacts/anchors-venv, made on the first run, with torch 2.13.0 from the CPU file on
disk); stockdemo runs in this one. Each model and tool runs in its own process, killed
after ``--timeout`` seconds. For each, printed and written to artifacts/anchors.md:

- time to the picture, from the call with the model and its input in hand (the forward
  included) to the picture painted in Chromium, in two ways. The Python part: torchviz's
  ``make_dot`` and torchview's ``draw_graph`` until ``dot -Tsvg`` has written the SVG;
  torchvista's ``trace_model`` HTML; stockdemo's ``stockdemo.show`` + ``widget.save``, as an
  SVG file (the picture alone) and as the offline handout. The browser part, (a) a fresh
  page: the file opened in a new tab, by the page's own clock from its navigation's start
  until the frame the picture is first in has been handed to the compositor (the browser
  warmed up by one page first; each file opened ``--opens`` times); for the handout, its
  poster, and when its view has taken the poster's place; (b) an open page, as
  a notebook shows a cell's output: the SVG as JupyterLab shows one (an <img> with the SVG
  as its data: URI, until loaded and painted), and ours rendered by the anywidget
  module (loaded beforehand, as JupyterLab loads a widget's module once) from the
  widget's payload, until painted (torchvista's picture is a page of its own: n/a); there
  ours counts ``show`` alone, which makes the payload (a notebook writes no file).
  Each a median of ``--repeat`` fresh runs;
- the nodes drawn (the SVG's nodes; torchvista's drawn node groups; the view's boxes);
- whether the ops by type equal autograd's own: a ``grad_fn.next_functions`` walk from
  the output, counted by ``type(fn).__name__``, against what the tool drew, where it draws
  autograd nodes (torchview and torchvista draw modules and torch calls: n/a);
- the frame time while zooming, where the tool can zoom in the browser (torchvista, and
  stockdemo's view: a wheel event every frame, in then out, timed by requestAnimationFrame;
  for stockdemo also its own draw time, ``data-draw-ms``, and, in a second pass, the time
  the canvas then takes to rasterise those commands). Static SVG: n/a.

Graphviz's ``dot`` (Debian's graphviz) draws torchviz's and torchview's pictures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from harness.helpers import ROOT  # noqa: E402

ENV = ROOT / "artifacts" / "anchors-venv"
OUT = ROOT / "artifacts" / "anchors"
TABLE = ROOT / "artifacts" / "anchors.md"
# torch stays the CPU file on disk: named in the same install, the tools cannot pull another.
PINS = ("torch==2.13.0", "numpy==2.4.6", "graphviz==0.21",
        "torchviz==0.0.3", "torchview==0.2.7", "torchvista==0.2.13")
TOOLS = ("torchviz", "torchview", "torchvista", "stockdemo")
SLOW_S = 10.0  # a tool this slow on a model runs once
NO_DOT = "needs Graphviz's dot: apt-get install graphviz"
FN_NODE = re.compile(r"\t\S+ \[label=(\w+)\]$")  # a DOT node statement with no fillcolor


def stage(text: str) -> None:
    """How far a worker got, for the row of one stopped at the time limit."""
    print(f"stage: {text}", file=sys.stderr, flush=True)


def svg_of(dot_source: str, path: Path) -> str:
    """DOT -> SVG by Graphviz's ``dot``, written to ``path``."""
    done = subprocess.run(["dot", "-Tsvg"], input=dot_source.encode(), capture_output=True, check=True)
    path.write_bytes(done.stdout)
    return done.stdout.decode()


# Each tool: (model, x, files folder) -> what it drew. Runs in a worker process, timed there.

def draw_torchviz(model, x, out: Path) -> dict:
    from torchviz import make_dot

    started = time.perf_counter()
    dot = make_dot(model(x), params=dict(model.named_parameters()))
    stage(f"make_dot gave {len(dot.body):,} DOT lines in {time.perf_counter() - started:.2f} s")
    svg_of(dot.source, out / "torchviz.svg")
    seconds = time.perf_counter() - started
    # Grad_fn nodes are the unfilled ones; tensors (parameters, outputs) carry a fillcolor.
    ops = Counter(m.group(1) for m in map(FN_NODE.match, dot.body) if m)
    return {"seconds": seconds, "page": str(out / "torchviz.svg"), "ops": ops}


def draw_torchview(model, x, out: Path) -> dict:
    from torchview import draw_graph

    started = time.perf_counter()
    graph = draw_graph(model, input_data=x)
    stage(f"draw_graph done in {time.perf_counter() - started:.2f} s")
    svg_of(graph.visual_graph.source, out / "torchview.svg")
    return {"seconds": time.perf_counter() - started, "page": str(out / "torchview.svg"), "ops": None}


def draw_torchvista(model, x, out: Path) -> dict:
    from torchvista import trace_model

    path = out / "torchvista.html"
    started = time.perf_counter()
    trace_model(model, x, export_format="html", export_path=str(path))
    return {"seconds": time.perf_counter() - started, "page": str(path), "ops": None}


def draw_stockdemo(model, x, out: Path) -> dict:
    """Ours as a notebook calls it: ``stockdemo.show(model, x)``, then ``widget.save`` as an SVG
    file (its picture, as torchviz's and torchview's) and as the handout (the same view)."""
    from stockdemo.notebook import show  # imported before the clock starts, as each anchor's call is

    path, svg = out / "stockdemo.html", out / "stockdemo.svg"
    started = time.perf_counter()
    widget = show(model, x)
    shown = time.perf_counter() - started  # a notebook's output needs no more than this
    widget.save(svg)
    svg_seconds = time.perf_counter() - started
    saved = time.perf_counter()
    widget.save(path)
    seconds = shown + time.perf_counter() - saved
    (out / "stockdemo.payload.json").write_text(widget.payload, encoding="utf-8")
    graph = widget.run.graph
    # A node's op is grad_fn.name(): 'torch::autograd::AccumulateGrad' for a parameter's.
    ops = Counter(n.op.rsplit("::", 1)[-1] for n in graph.nodes if n.kind in ("op", "parameter"))
    placed = "steps x layers" if graph.meta.get("unrolled") else "by line and iteration"
    return {"seconds": seconds, "open_seconds": shown, "svg_seconds": svg_seconds, "page": str(path),
            "svg_page": str(svg), "ops": ops, "note": placed}


DRAW = {"torchviz": draw_torchviz, "torchview": draw_torchview, "torchvista": draw_torchvista,
        "stockdemo": draw_stockdemo}


def worker(tool: str, model_name: str, out: str) -> None:
    """One tool on one model; prints one JSON line."""
    import torch

    from harness.autograd import ops_by_type
    from stockdemo.zoo import ZOO

    torch.set_num_threads(1)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model, x = ZOO[model_name]()
    reference = ops_by_type(model(x))  # also warms torch up before the timed call
    started = time.perf_counter()
    try:
        result = DRAW[tool](model, x, out)
    except Exception as e:  # the tool's own failure is a result
        result = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}",
                  "seconds": time.perf_counter() - started}
    result["reference"] = reference
    print(json.dumps(result))


def anchors_python() -> Path:
    """The anchors' virtual environment, made once (torch==2.13.0 takes the CPU file on disk)."""
    python = ENV / "bin" / "python"
    stamp = ENV / "pins.txt"
    if not (stamp.exists() and stamp.read_text() == "\n".join(PINS)):
        shutil.rmtree(ENV, ignore_errors=True)
        print(f"making {ENV.relative_to(ROOT)}: {' '.join(PINS)} (a minute or two, once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PINS], check=True)
        stamp.write_text("\n".join(PINS))
    return python


def run_worker(tool: str, model_name: str, timeout: float) -> dict:
    python = sys.executable if tool == "stockdemo" else str(anchors_python())
    out = OUT / model_name
    # Started by -c, not as this script: the frames around the call are then the worker's,
    # as a notebook's are its kernel's and a cell's. (stockdemo reads the loops around the
    # lines of the caller's frames; as a script's top level, this whole file would be one.)
    call = (f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); "
            "import anchors; anchors.worker(*sys.argv[1:])")
    proc = subprocess.Popen([python, "-c", call, tool, model_name, str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the worker and its dot
        stages = [line[7:] for line in proc.communicate()[1].splitlines() if line.startswith("stage: ")]
        reached = f"; {stages[-1]}, then dot ran on" if stages else ""
        return {"error": f"no picture after {timeout:.0f} s (stopped{reached})", "seconds": None}
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode or not lines:
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {proc.returncode}: {tail[:160]}", "seconds": None}
    return json.loads(lines[-1])


# In the page: a wheel event on the zoom surface every frame, half in, half out; the gaps
# between frames (requestAnimationFrame) and, for stockdemo's view, its own draw time.
# With ``flush``, each frame's canvas is then read back (getImageData), which waits for
# its drawing commands to be rasterised: the raster time the view's draw time leaves out.
ZOOM = """async ([surface, frames, delta, flush]) => {
  const el = document.querySelector(surface);
  const view = document.querySelector("[data-testid='graph-view']");
  const r = el.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const raf = () => new Promise((done) => requestAnimationFrame(done));
  const gaps = [], drawMs = [], rasterMs = [];
  const ctx = flush && el.getContext('2d');
  let last = await raf();
  for (let i = 0; i < frames; i++) {
    const draws = view ? +view.dataset.draws : 0;
    el.dispatchEvent(new WheelEvent('wheel', {deltaY: i < frames / 2 ? -delta : delta, deltaMode: 0,
      clientX: x, clientY: y, bubbles: true, cancelable: true, view: window}));
    const now = await raf();
    gaps.push(now - last);
    last = now;
    if (view && +view.dataset.draws !== draws) drawMs.push(+view.dataset.drawMs);
    if (ctx) {
      const t0 = performance.now();
      ctx.getImageData(0, 0, 1, 1);
      rasterMs.push(performance.now() - t0);
      last = await raf();  // the read-back's time stays out of the next gap
    }
  }
  return {gaps, drawMs, rasterMs};
}"""

VIEW_DRAWN = "!!document.querySelector(\"[data-testid='graph-view'][data-drawn-graph]\")"
SVG_PAGE = ("document.readyState === 'complete' && !!document.querySelector('svg')",
            "document.querySelectorAll('g.node').length", None)
PAGES = {  # tool -> (drawn when this is true, the nodes drawn, the element zoom listens on)
    "torchviz": SVG_PAGE,
    "torchview": SVG_PAGE,
    "torchvista": ("document.querySelectorAll('g[class^=\"node_\"]').length > 0",
                   "document.querySelectorAll('g[class^=\"node_\"]').length",
                   "[id^='graph_'] > svg"),
    # The handout's poster (stockdemo/render/poster.py) or, where it has none, the view drawn.
    "stockdemo": ("!!document.querySelector(\"[data-testid='graph-poster'], [data-testid='graph-view']"
                  "[data-drawn-graph]\")",
                  "+document.querySelector(\"[data-testid='graph-view']\").dataset.nodes",
                  "[data-testid='graph-view'] canvas"),
    # Ours saved as an SVG file: its boxes.
    "stockdemo-svg": (SVG_PAGE[0], "document.querySelectorAll('rect.pb, rect.pm').length", None),
}
# The page's own clock, from the start of its navigation: in every frame until the picture
# is in (the drawn condition), then, once that frame's work is done (a task queued from its
# animation frame runs after its paint is handed to the compositor), the time. Not the next
# frame's start: a handout builds its view right after painting its poster, and the
# compositor shows the poster meanwhile. Installed before the page loads, in HTML and SVG
# documents alike, so neither pays for a round trip from the benchmark (Playwright's first
# call into an SVG document costs it about 0.1 s more than into an HTML page: that was
# being counted as drawing). The condition is inlined, not evaluated: the handout's policy
# forbids eval. One clock per (name, condition).
PAINT_CLOCK = """(() => {
  const drawn = () => { try { return !!(%s); } catch (e) { return false; } };
  const tick = () => {
    if (!drawn()) { requestAnimationFrame(tick); return; }
    setTimeout(() => { window.%s = performance.now(); }, 0);
  };
  requestAnimationFrame(tick);
})();"""
WARM_UP = ("<!doctype html><svg width='40' height='40'><text y='20'>warm</text></svg>"
           "<canvas width='40' height='40'></canvas>")


def warm_up(browser) -> None:
    """A browser's first tab pays for starting a renderer and its fonts: once, before any row."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_content(WARM_UP)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.close()


def in_browser(browser, tool: str, page_file: str, frames: int, timeout: float, zoom: bool = True) -> dict:
    """Open the tool's HTML or SVG from disk in a fresh page until drawn and painted, then zoom it."""
    drawn, count, surface = PAGES[tool]
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.add_init_script(PAINT_CLOCK % (drawn, "__sdPaintedAt"))
        if tool == "stockdemo":  # and when the view has taken the poster's place
            page.add_init_script(PAINT_CLOCK % (VIEW_DRAWN, "__sdViewAt"))
        page.goto(Path(page_file).as_uri(), timeout=timeout * 1e3)
        # A function, not an expression: the handout's policy forbids eval.
        page.wait_for_function("() => window.__sdPaintedAt !== undefined", polling=5, timeout=timeout * 1e3)
        found = {"browser_s": page.evaluate("window.__sdPaintedAt") / 1e3}
        if tool == "stockdemo":
            page.wait_for_function("() => window.__sdViewAt !== undefined", polling=5, timeout=timeout * 1e3)
            found["view_s"] = page.evaluate("window.__sdViewAt") / 1e3
        found["nodes"] = page.evaluate(count)
        if surface and zoom:
            found.update(page.evaluate(ZOOM, [surface, frames, 40, False]))
            if tool == "stockdemo":
                found["rasterMs"] = page.evaluate(ZOOM, [surface, frames, 40, True])["rasterMs"]
        return found
    except Exception as e:  # a page that never draws is a result
        return {"browser_error": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"}
    finally:
        page.close()


# A page already open, as a notebook is when a cell runs: the tool's picture put into it.
# An SVG goes in as JupyterLab shows an image/svg+xml output (rendermime's renderSVG, the
# same in the 4.6 this repository tests with): an <img> whose source is the SVG as a data:
# URI, painted once the image has loaded. Ours is the anywidget module's render(), loaded
# once beforehand as JupyterLab loads a widget's module, with a model that holds the
# payload. Milliseconds to the picture painted.
INSERT_SVG = """async (source) => {
  const t0 = performance.now();
  const host = document.createElement('div');
  document.body.replaceChildren(host);
  if (source.search('<svg[^>]+xmlns=[^>]+svg') < 0) {
    source = source.replace('<svg', '<svg xmlns="http://www.w3.org/2000/svg"');
  }
  const img = new Image();
  const loaded = new Promise((done, fail) => { img.onload = done; img.onerror = fail; });
  img.src = `data:image/svg+xml,${encodeURIComponent(source)}`;
  host.appendChild(img);
  await loaded;
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return {ms: performance.now() - t0};
}"""
LOAD_WIDGET = """async ([js, css]) => {
  const style = document.createElement('style');
  style.textContent = css;
  document.head.append(style);
  const url = URL.createObjectURL(new Blob([js], {type: 'text/javascript'}));
  window.__widget = (await import(url)).default;
}"""
RENDER_WIDGET = """async (payload) => {
  const model = {state: {payload, selected: null, unroll: []}, get(k) { return this.state[k]; },
                 set(k, v) { this.state[k] = v; }, save_changes() {}, on() {}, off() {}};
  const t0 = performance.now();
  const el = document.createElement('div');
  document.body.replaceChildren(el);
  window.__widget.render({model, el});
  const drawn = () => el.querySelector("[data-testid='graph-view'][data-drawn-graph]");
  while (!drawn()) await new Promise((done) => requestAnimationFrame(done));
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return {ms: performance.now() - t0, nodes: +drawn().dataset.nodes};
}"""


def in_open_page(browser, tool: str, result: dict) -> float | None:
    """Seconds from handing the picture to an open page to it painted; None where it does not apply."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        page.set_content("<!doctype html><html><body></body></html>")
        if tool in ("torchviz", "torchview"):
            svg = Path(result["page"]).read_text(encoding="utf-8")
            # Once first, another image (a cached one would skip its decoding): the page's
            # own first-use costs.
            page.evaluate(INSERT_SVG, svg + "<!-- first -->")
            return page.evaluate(INSERT_SVG, svg)["ms"] / 1e3
        if tool == "stockdemo":
            from stockdemo.notebook import ASSETS

            payload = (Path(result["page"]).parent / "stockdemo.payload.json").read_text(encoding="utf-8")
            page.evaluate(LOAD_WIDGET, [(ASSETS / "widget.js").read_text(encoding="utf-8"),
                                        (ASSETS / "widget.css").read_text(encoding="utf-8")])
            page.evaluate(RENDER_WIDGET, payload)  # a first widget: the module's first-use costs
            return page.evaluate(RENDER_WIDGET, payload)["ms"] / 1e3
        return None  # torchvista's picture is a page of its own
    finally:
        page.close()


def ops_cell(result: dict) -> str:
    if result.get("ops") is None:
        return "module graph: n/a"
    got, want = Counter(result["ops"]), Counter(result["reference"])
    if got == want:
        return f"equal ({sum(want.values()):,} nodes, {len(want)} types)"
    diff = sorted(set(got) | set(want), key=lambda k: -abs(got[k] - want[k]))
    shown = ", ".join(f"{k} {got[k]} vs {want[k]}" for k in diff if got[k] != want[k])
    return f"differs: {shown[:120]}"


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    q = statistics.quantiles(values, n=20) if len(values) > 1 else values
    return f"{statistics.median(values):.1f} / {q[-1]:.1f} / {max(values):.1f}"


def row(model_name: str, tool: str, result: dict) -> list[str]:
    if "error" in result:
        return [model_name, tool, "no picture", "-", "-", result["error"], "-", "-", "-"]
    if "browser_error" in result:
        return [model_name, tool, "no picture", "-", "-", result["browser_error"], "-", "-", "-"]
    note = f" ({result['note']})" if result.get("note") else ""
    def total(python_s: float, browser_s: float) -> str:
        return f"{(python_s + browser_s) * 1e3:.0f} ms ({python_s * 1e3:.0f} + {browser_s * 1e3:.0f})"

    fresh = total(result["seconds"], result["browser_s"])
    if result.get("svg_s") is not None:  # ours: the SVG file, then the handout and its view
        fresh = (f"SVG {total(result['svg_seconds'], result['svg_s'])}; handout {fresh}, "
                 f"its view {(result['seconds'] + result['view_s']) * 1e3:.0f} ms")
    opened = ("n/a (a page of its own)" if result.get("open_s") is None
              else total(result.get("open_seconds", result["seconds"]), result["open_s"]))
    return [model_name, tool, fresh, opened, f"{result['nodes']:,}{note}", ops_cell(result),
            ms(result.get("gaps", [])) if "gaps" in result else "n/a (static SVG)",
            ms(result.get("drawMs", [])) if tool == "stockdemo" else "-",
            ms(result.get("rasterMs", [])) if tool == "stockdemo" else "-"]


HEAD = ["model", "tool", "call to picture, fresh page (Python + browser)",
        "call to picture, open page (Python + browser)", "nodes drawn", "ops by type vs autograd's walk",
        "zoom frame gap ms (median / p95 / max)", "view draw ms (median / p95 / max)",
        "canvas raster ms (median / p95 / max)"]


def measure(browser, tool: str, model_name: str, args) -> dict:
    """``--repeat`` fresh runs of one tool on one model (a slow one once), each file opened
    ``--opens`` times in a fresh page (a new tab's time varies by tens of ms): the first
    run's figures, with the medians of its times."""
    runs: list[dict] = []
    opens: dict[str, list[float]] = {}
    for k in range(args.repeat):
        if tool in ("torchviz", "torchview") and shutil.which("dot") is None:
            return {"error": NO_DOT}
        result = run_worker(tool, model_name, args.timeout)
        for n in range(args.opens):
            found = {}
            if "svg_page" in result:
                svg = in_browser(browser, "stockdemo-svg", result["svg_page"], args.frames, args.timeout)
                found["svg_s"] = svg.get("browser_s")
            if "page" in result:
                found.update(in_browser(browser, tool, result["page"], args.frames, args.timeout,
                                        zoom=k == 0 and n == 0))
            if "browser_error" in found or n == 0:
                result.update(found)
            for key in ("browser_s", "view_s", "svg_s"):
                if found.get(key) is not None:
                    opens.setdefault(key, []).append(found[key])
            if "browser_error" in found:
                break
        if "page" in result and "browser_error" not in result:
            result["open_s"] = in_open_page(browser, tool, result)
        runs.append(result)
        if "error" in result or "browser_error" in result or result["seconds"] > SLOW_S:
            break
    first = runs[0]
    for key in ("seconds", "open_seconds", "open_s", "svg_seconds"):
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            first[key] = statistics.median(values)
    for key, values in opens.items():
        first[key] = statistics.median(values)
    return first


def markdown(rows: list[list[str]], preface: str) -> str:
    lines = [preface, "", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(("seed", "gru", "transformer", "resnet",
                                                       "lstm_loop", "while_loop")))
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per model and tool")
    parser.add_argument("--frames", type=int, default=40, help="wheel events while zooming")
    parser.add_argument("--repeat", type=int, default=3, help="fresh runs per model and tool (median)")
    parser.add_argument("--opens", type=int, default=3, help="fresh pages per run's file (median)")
    args = parser.parse_args()
    tools = args.tools.split(",")
    if shutil.which("dot") is None and {"torchviz", "torchview"} & set(tools):
        print(f"torchviz and torchview {NO_DOT} (Debian's package); their rows will say so.")
    from playwright.sync_api import sync_playwright

    from harness.helpers import CHROMIUM, CHROMIUM_ARGS

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        warm_up(browser)
        for model_name in args.models.split(","):
            for tool in tools:
                rows.append(row(model_name, tool, measure(browser, tool, model_name, args)))
                print(" | ".join(rows[-1]), flush=True)
        browser.close()
    load = os.getloadavg()
    preface = (f"Figures from `python bench/anchors.py` on {os.cpu_count()} cores (load average "
               f"{load[0]:.1f} at the end): times are medians of {args.repeat} fresh runs (one where a run "
               f"took over {SLOW_S:.0f} s), each file opened in {args.opens} fresh pages; zoom from "
               "the first.")
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(markdown(rows, preface), encoding="utf-8")
    print()
    print(markdown(rows, preface))
    print(f"written to {TABLE.relative_to(ROOT)}; pictures in {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
