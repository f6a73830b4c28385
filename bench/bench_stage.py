"""The Playground's stage in a real browser: what is on screen, the drag, a step, the transition.

    python bench/bench_stage.py [--drags 3] [--steps 9] [--runs] [--before CHECKOUT]

Starts what ``make run`` serves, `deploy/replica_app.py` (as ``make serve``'s replicas: the
moves on the stage's own socket, ``stockdemo/ui/stage_route.py``; without its warm-up, so no
length is run before the learner asks), on a free loopback port, or with ``--runs`` plain
`streamlit run app.py` (a host that runs app.py alone, such as Community Cloud: every move a
run of the stage's fragment), and drives headless
Chromium (software rendering: a laptop's GPU does better). ``--before`` serves another
checkout (``git archive main | tar -x -C /tmp/base``) beside this one, the same way, and the
drags and key steps take turns between the two, so the box's load falls on both alike.
Prints, with medians (issue 50's targets):

- at load, without scrolling, for 1280x720, 1366x768, 1440x900, 1920x1080 (presenter
  mode off and on) and 390x844: the share of the graph view (the whole component:
  its controls, toolbar and graph) that is on screen while the T control is, and the
  graph's share of the viewport (the drawn canvas's visible area over the window's).
  Targets: 100 %; >= 50 % on laptops and projectors, >= 60 % presenting at 1920x1080,
  >= 40 % on the phone;
- a 2 s mouse drag of T from 5 to 40 (35 moves, ~57 ms apart): distinct graphs drawn
  while the mouse is down (target >= 20), and the time from release to the final T's
  graph drawn (target <= 0.3 s). Each drag crosses lengths the server has not run;
- a keyboard step at the default run: key press to the first frame that drew the new
  graph, timed in the page (target: median <= 50 ms), to lengths not run before and
  back and forth, one at a time (each after the page's panels have followed the last);
  and its parts, from the view's marks: the key to the request sent, the request to the
  view's ``update()`` (the server and, for a run, Streamlit's messages and React's work),
  ``update()`` to the first frame;
- the transition's frame rate at ~2,000 nodes (nn.GRU, 2 layers, T 70 -> 71, unrolled),
  as the view counts it (``data-motion-fps``: frames drawn over the glide's duration).

Exit status 1 when a target is missed (by this checkout). Figures depend on the box: every
run prints ``bench/reference.py``'s figure and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from playwright.sync_api import sync_playwright  # noqa: E402

from harness.drive import VIEW, wait_for_run  # noqa: E402
from harness.helpers import CHROMIUM, CHROMIUM_ARGS, MAKE_RUN, ROOT, served_checkout  # noqa: E402

VIEWPORTS = [(1280, 720, False), (1280, 720, True), (1366, 768, False), (1366, 768, True),
             (1440, 900, False), (1440, 900, True), (1920, 1080, False), (1920, 1080, True),
             (390, 844, False)]
LARGE = "cell=gru&num_layers=2&seq_len=70&view=unrolled"  # 1,988 nodes; T 71: 2,016
DRAG_GRAPHS = 20  # issue 50: graphs drawn during a 2 s drag, at least
KEY_MS = 50  # issue 50: a keyboard step to the new graph drawn, median, at most
PARTS = ("sent", "update", "frame")
# The key's time and the view's marks for the first frame that drew another graph than `g`.
STEP_MARKS = """(g) => { const v = window.__view.dataset, d = window.__drawn.find(d => d.graph !== g);
  return {sent: +v.sentAt - window.__key, update: +v.updatedAt - +v.sentAt, frame: d.at - +v.updatedAt,
          total: d.at - window.__key}; }"""

# In the page: every picture drawn, with the time and whether the mouse was down; the
# time of the last key press. The view is inside its component's shadow root.
RECORDER = """() => {
  const view = [...document.querySelectorAll('*')].map(e => e.shadowRoot
    && e.shadowRoot.querySelector("[data-testid='graph-view']")).find(Boolean);
  window.__view = view; window.__drawn = []; window.__down = false;
  document.addEventListener('keydown', () => { window.__key = performance.now(); }, true);
  new MutationObserver(() => {
    const g = view.dataset.drawnGraph, last = window.__drawn[window.__drawn.length - 1];
    if (!last || last.graph !== g) window.__drawn.push({graph: g, nodes: +view.dataset.nodes,
      at: parseFloat(view.dataset.drawnAt), down: window.__down});
  }).observe(view, {attributes: true, attributeFilter: ['data-drawn-graph']});
}"""
SHARES = """() => {
  const view = window.__view, canvas = view.querySelector('canvas');
  const slider = view.querySelector("[data-knob='seq_len'] input[type=range]");
  const W = innerWidth, H = innerHeight;
  const seen = (r) => Math.max(0, Math.min(r.right, W) - Math.max(r.left, 0))
    * Math.max(0, Math.min(r.bottom, H) - Math.max(r.top, 0));
  const v = view.getBoundingClientRect(), c = canvas.getBoundingClientRect();
  const s = slider.getBoundingClientRect();
  return {view: seen(v) / (v.width * v.height), control: seen(s) / (s.width * s.height),
          graph: seen(c) / (W * H)};
}"""


def open_stage(page, base: str, query: str = "") -> None:
    page.goto(f"{base}/playground" + (f"?{query}" if query else ""))
    wait_for_run(page, timeout=120_000, ready=f"{VIEW}[data-drawn-graph]")
    page.wait_for_selector(f"{VIEW}[data-moving='0']", timeout=60_000)
    page.evaluate(RECORDER)


def shares(browser, base: str) -> list[tuple[str, dict, dict]]:
    out = []
    for width, height, present in VIEWPORTS:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        open_stage(page, base, "present=1" if present else "")
        page.wait_for_timeout(500)
        if width <= 640:
            target = 0.40
        elif present and width >= 1920:
            target = 0.60
        else:
            target = 0.50
        out.append((f"{width}x{height}{' presenting' if present else ''}", page.evaluate(SHARES),
                    {"graph": target}))
        context.close()
    return out


def drag(page, base: str, start: int, end: int, seconds: float = 2.0) -> tuple[int, float, int]:
    """-> (distinct graphs drawn while the mouse was down, release -> final graph ms, final T)."""
    slider = page.get_by_role("slider", name="Sequence length T")
    box = slider.bounding_box()

    def x_of(t: int) -> float:  # the thumb's centre for value t: a 16 px thumb over 1..200
        return box["x"] + 8 + (t - 1) / 199 * (box["width"] - 16)

    y = box["y"] + box["height"] / 2
    page.mouse.move(x_of(start), y)
    page.mouse.down()
    page.evaluate("() => { window.__drawn = []; window.__down = true; }")
    steps = abs(end - start)
    t0 = page.evaluate("performance.now()")
    for i in range(1, steps + 1):
        page.mouse.move(x_of(start + (end - start) * i // steps), y)
        left = t0 + seconds * 1000 * i / steps - page.evaluate("performance.now()")
        if left > 0:
            page.wait_for_timeout(left)
    page.evaluate("() => { window.__down = false; window.__up = performance.now(); }")
    page.mouse.up()
    final = int(slider.input_value())
    page.wait_for_function("(n) => +window.__view.dataset.nodes === n && window.__view.dataset.drawnGraph"
                           " === window.__view.dataset.graph", arg=final_nodes(final), timeout=60_000)
    drawn = page.evaluate("window.__drawn")
    up = page.evaluate("window.__up")
    during = {d["graph"] for d in drawn if d["down"]}
    last = next(d for d in reversed(drawn) if d["nodes"] == final_nodes(final))
    wait_for_run(page)
    return len(during), max(0.0, last["at"] - up), final


def final_nodes(t: int) -> int:
    return 18 + 4 * t  # nn.RNN, one layer (the default run): 4 nodes a step


def key_step(page, key: str) -> dict[str, float]:
    """One key press on T -> ms from the key to the first frame that drew the new graph
    (``total``), and its parts (``PARTS``), each from the mark before it."""
    page.get_by_role("slider", name="Sequence length T").focus()
    before = page.evaluate("() => { window.__drawn = []; return window.__view.dataset.drawnGraph; }")
    page.keyboard.press(key)
    page.wait_for_function("(g) => window.__view.dataset.drawnGraph !== g", arg=before, timeout=60_000)
    # The first frame that drew the new graph (the recorder's), not the view's latest
    # frame: by the time this reads, the transition has drawn one or two more.
    marks = page.evaluate(STEP_MARKS, before)
    idle(page)  # one step at a time: the page's panels catch up before the next
    return marks


def idle(page) -> None:
    """Until the step's aftermath is done: the stage settled (0.3 s), the panels redrawn."""
    wait_for_run(page)
    page.wait_for_timeout(450)
    wait_for_run(page)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 150)))")


def transition_fps(page, base: str, repeats: int) -> tuple[int, list[float], list[float]]:
    open_stage(page, base, LARGE)
    slider = page.get_by_role("slider", name="Sequence length T")
    fps, ms = [], []
    for i in range(repeats):
        slider.focus()
        # A transition's figures are written when it ends; two can have the same frame
        # count, so the old figure is removed first and its return marks the end.
        page.evaluate("delete window.__view.dataset.motionFrames")
        page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function("() => window.__view.dataset.motionFrames !== undefined"
                               " && window.__view.dataset.moving === '0'", timeout=120_000)
        fps.append(float(page.evaluate("window.__view.dataset.motionFps")))
        ms.append(float(page.evaluate("window.__view.dataset.motionMs")))
        idle(page)
    return int(page.evaluate("window.__view.dataset.nodes")), fps, ms


def taking_turns(pages: dict, i: int) -> list[tuple[str, object]]:
    """The servers' pages in turn, who goes first alternating with ``i``."""
    return list(pages.items())[:: 1 if i % 2 == 0 else -1]


def moves(browser, servers: dict[str, str], drags: int, steps: int) -> dict[str, dict[str, list]]:
    """The drags and key steps of every server, taking turns -> by server: ``during`` and ``after``
    (each drag's), ``cold`` and ``warm`` (each key step's marks)."""
    pages = {name: browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
             for name in servers}
    out = {name: {"during": [], "after": [], "cold": [], "warm": []} for name in servers}
    for i in range(drags):
        for name, page in taking_turns(pages, i):
            open_stage(page, servers[name], f"seed={100 + i}")  # a fresh seed: every length a new run
            n, ms, final = drag(page, servers[name], 5, 40)
            out[name]["during"].append(n)
            out[name]["after"].append(ms)
            print(f"  {name} drag {i + 1}: {n} distinct graphs while the mouse was down, final T {final} "
                  f"drawn {ms:.0f} ms after release", flush=True)
    for kind, query in (("cold", "seed=200"), ("warm", "")):
        for name, page in pages.items():
            open_stage(page, servers[name], query)
        for i in range(steps):
            key = "ArrowRight" if kind == "cold" or i % 2 == 0 else "ArrowLeft"
            for name, page in taking_turns(pages, i):
                out[name][kind].append(key_step(page, key))
    return out


def report_moves(name: str, got: dict[str, list]) -> list[str]:
    """Print one server's drags and key steps -> the targets it missed."""
    missed = []
    during, after = statistics.median(got["during"]), statistics.median(got["after"])
    print(f"  {name}: drags {during:.0f} graphs while down (target >= {DRAG_GRAPHS}), "
          f"{after:.0f} ms after release (target <= 300)")
    if during < DRAG_GRAPHS or after > 300:
        missed.append(f"{name} drag")
    for kind, what in (("cold", "to lengths not run before"), ("warm", "T 5 <-> 6, both run before")):
        totals = [m["total"] for m in got[kind]]
        parts = ", ".join(f"{p} {statistics.median(m[p] for m in got[kind]):.1f}" for p in PARTS)
        print(f"  {name}: key step {what}: median {statistics.median(totals):.0f} ms (min {min(totals):.0f}, "
              f"max {max(totals):.0f}; parts, medians: {parts})")
    if statistics.median(m["total"] for m in got["cold"]) > KEY_MS:
        missed.append(f"{name} keyboard step")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--drags", type=int, default=3)
    ap.add_argument("--steps", type=int, default=9)
    ap.add_argument("--runs", action="store_true",
                    help="serve `streamlit run app.py` alone (each move a script run)")
    ap.add_argument("--before", type=Path, help="another checkout, served beside this one, turn about")
    args = ap.parse_args()
    from reference import reference_ms

    print(f"bench/reference.py: {reference_ms():.1f} ms · load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    script, env = ("app.py", {}) if args.runs else MAKE_RUN
    missed = []
    with contextlib.ExitStack() as stack, sync_playwright() as p:
        servers = {"this": stack.enter_context(served_checkout(ROOT, script, env))}
        if args.before:
            servers = {"before": stack.enter_context(served_checkout(args.before.resolve(), script, env)),
                       "after": servers["this"]}
        this = list(servers)[-1]
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        print(f"\nAt load, without scrolling, {this} (view on screen / T control on screen / graph's share):")
        for name, got, target in shares(browser, servers[this]):
            ok = got["view"] >= 0.999 and got["control"] >= 0.999 and got["graph"] >= target["graph"]
            if not ok:
                missed.append(name)
            print(f"  {name:24s} view {got['view']:6.1%}  T control {got['control']:6.1%}  graph "
                  f"{got['graph']:5.1%} (target {target['graph']:.0%}){'' if ok else '  MISSED'}")

        print(f"\nA 2 s mouse drag of T, 1440x900 ({args.drags} drags, alternating 5 -> 40 and back over "
              f"lengths not run before: each drag moves the other knobs' seed), then {args.steps} key steps "
              "at the default run (key press -> new graph drawn), through "
              f"{script}{' (runs of the stage)' if args.runs else ' (the stage socket)'}:")
        by_server = moves(browser, servers, args.drags, args.steps)
        print(f"Medians (targets: >= {DRAG_GRAPHS} graphs a drag, a key step to a length not run before "
              f"<= {KEY_MS} ms):")
        for name, got in by_server.items():
            missed += [m for m in report_moves(name, got) if name == this]

        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        nodes, fps, ms = transition_fps(page, servers[this], 5)
        print(f"\nTransition at {nodes:,} nodes (nn.GRU, 2 layers, T 70 <-> 71, unrolled): "
              f"median {statistics.median(fps):.0f} frames a second over {statistics.median(ms):.0f} ms "
              f"(each: {', '.join(f'{f:.0f}' for f in fps)})   target >= 30")
        if statistics.median(fps) < 30:
            missed.append("transition fps")
        browser.close()
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\nall targets met" if not missed else f"\nmissed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
