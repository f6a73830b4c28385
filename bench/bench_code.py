"""The "Your code" page through `make serve`: a press to its graph, and a class beside hostile code.

    python bench/bench_code.py [--presses 12] [--learners 30] [--hostile 5] [--rounds 4] [--moves-as-runs]

Starts ``deploy/serve.py`` (``make serve``: one replica per core behind HAProxy, with
redis) on free loopback ports, as bench/load.py does, and prints two figures:

- **press to graph**: headless Chromium at 1440x900 on /code, through HAProxy. Each press
  changes the comment on forward's ``return`` line (a text no cache has seen, so the
  sandbox really runs it, and new node ids for that line, so the view draws a new
  picture), then Ctrl+Enter. Timed in the page, from the key's ``keydown`` to the first
  frame that drew the new graph. Two presses first warm the pool (not counted). Also
  printed: the run's own time as the page shows it ("Run", fork to result in the
  sandbox). Target: median <= 250 ms.
- **learners beside hostile code**: ``--learners`` sessions on the Playground (Streamlit's
  websocket protocol, bench/load.py's ``Session``) each move T on the stage once a round,
  spread over half a second, ``--rounds`` rounds a phase; the values are the same plan in
  every phase, run once before as a warm-up, so every phase reads the same cache. Phases:
  alone, beside hostile code, alone, beside hostile code. Hostile code: ``--hostile``
  sessions on Your code, each submitting, as soon as its last answer came, an endless
  loop, a memory bomb in Python, then one in torch (each text new, so nothing is
  answered from the cache). The learners' moves go on the stage's socket, as a browser's
  do under ``make serve``; ``--moves-as-runs`` makes each a script run (class mode's
  path), which weighs the sandbox against Streamlit's own work. Targets: the learners'
  p95 beside hostile code within 1.5x of their p95 alone, 0 learners' errors; every
  hostile run ends with a message naming its limit (or the pool's refusal).

Exit status 1 when a target is missed. Figures depend on the box: the client shares the
cores with the servers; every run prints ``bench/reference.py``'s figure and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import load  # noqa: E402  bench/load.py: the target, the websocket Session, the figures
from playwright.sync_api import sync_playwright  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

from tests.browser.drive import wait_for_run  # noqa: E402
from tests.helpers import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

VIEW = "[data-testid='graph-view']"
RETURN_LINE = "return self.fc(out[:, -1, :])"
TARGET_PRESS_MS = 250
TARGET_RATIO = 1.5
# Each {tag} makes the text new: the page's cache answers a text it has run before.
HOSTILE = (
    "while True:  # {tag}\n    pass\n",
    "a = []  # {tag}\nwhile True:\n    a.append(bytearray(10**6))\n",
    "import torch  # {tag}\nxs = []\nwhile True:\n    xs.append(torch.ones(10**7))\n",
)
LIMIT_WORDS = ("time limit", "memory limit", "busy", "queue")  # the sandbox's words for a stop

# In the page: the key's time, and every new picture the view draws (with the frame's time).
# The view and the editor sit in their components' shadow roots.
RECORDER = """() => {
  const view = [...document.querySelectorAll('*')].map(e => e.shadowRoot
    && e.shadowRoot.querySelector("[data-testid='graph-view']")).find(Boolean);
  window.__drawn = [];
  document.addEventListener('keydown', (e) => { if (e.key === 'Enter') window.__key = performance.now(); },
                            true);
  new MutationObserver(() => {
    const g = view.dataset.drawnGraph, last = window.__drawn[window.__drawn.length - 1];
    if (!last || last.graph !== g) window.__drawn.push({graph: g, at: parseFloat(view.dataset.drawnAt)});
  }).observe(view, {attributes: true, attributeFilter: ['data-drawn-graph']});
}"""


def press_to_graph(url: str, presses: int) -> tuple[list[float], list[str]]:
    """-> (ms from Ctrl+Enter to the new graph's first frame, the run's own "Run" figure) per press."""
    times, runs = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{url}/code")
        wait_for_run(page, ready=f"{VIEW}[data-drawn-graph]")
        page.evaluate(RECORDER)
        view = page.locator(VIEW)
        for i in range(presses + 2):  # the first two warm the pool
            before = len(page.evaluate("window.__drawn"))
            page.locator(".cm-line").filter(has_text=RETURN_LINE).first.click()
            page.keyboard.press("End")
            page.keyboard.press("Shift+Home")
            page.keyboard.type(f"{RETURN_LINE}  # press {i}")
            page.keyboard.press("Control+Enter")
            page.wait_for_function("n => window.__drawn.length > n", arg=before, timeout=60_000)
            drawn = page.evaluate("[window.__drawn[window.__drawn.length - 1].at, window.__key]")
            wait_for_run(page, ready=None)
            if i >= 2:
                times.append(drawn[0] - drawn[1])
                runs.append(view.get_by_test_id("sdMetric").filter(has_text="Run")
                            .get_by_test_id("sdMetricValue").inner_text())
        browser.close()
    return times, runs


class CodeSession(load.Session):
    """A tab on Your code: the editor's Run, as its browser code sends it (a trigger ``run``)."""

    editor = ""
    presses = 0

    def _see_view(self, view, fragment_id: str) -> None:
        if view.component_name.endswith("stockdemo_code_editor"):
            from streamlit.components.v2.bidi_component.main import _make_trigger_id

            self.editor = _make_trigger_id(view.id, "events")
            return
        super()._see_view(view, fragment_id)

    def submit(self, code: str) -> None:
        self.presses += 1
        self.json_triggers.append(WidgetState(id=self.editor, json_trigger_value=json.dumps(
            [{"event": "run", "value": {"code": code, "n": self.presses}}])))


async def class_phases(url: str, args) -> dict[str, list[float]]:
    """Learners alone and beside hostile code -> per phase, the learners' move times; and the
    hostile sessions' outcomes under "hostile" (seconds) and "stops" (their messages)."""
    tally = load.Tally()
    learners = [load.Session(url, "playground", args.timeout) for _ in range(args.learners)]

    async def first(s: load.Session) -> None:
        await s.open()
        await s.run()

    await asyncio.gather(*(load.guarded(tally, f"learner {i} open", first(s))
                           for i, s in enumerate(learners)))
    plans = [[random.Random(i * 7919 + r).randint(5, 40) for r in range(args.rounds)]
             for i in range(len(learners))]

    async def phase(name: str, out: list[float]) -> None:
        for r in range(args.rounds):
            async def move(i: int, s: load.Session, r: int = r) -> None:
                await asyncio.sleep(random.Random(i + 31 * r).uniform(0, 0.5))
                s.set_value("seq_len", plans[i][r])
                result = await s.run()
                out.append(result.seconds)
                tally.errors.extend(f"{name} learner {i}: {e}" for e in result.errors)
            await asyncio.gather(*(load.guarded(tally, f"{name} learner {i}", move(i, s))
                                   for i, s in enumerate(learners)))
            await asyncio.sleep(0.5)

    hostile_s: list[float] = []
    stops: list[str] = []
    attacks = load.Tally()  # the hostile sessions' own troubles, apart from the learners'

    async def hostile(i: int, s: CodeSession, stop: asyncio.Event) -> None:
        await s.open()
        await s.run()
        k = 0
        while not stop.is_set():
            s.submit(HOSTILE[k % len(HOSTILE)].format(tag=f"{i}.{k}.{time.time_ns()}"))
            result = await s.run()
            hostile_s.append(result.seconds)
            stops.append(" ".join(result.errors) or "no message")
            k += 1

    figures: dict[str, list[float]] = {"warm-up": [], "alone": [], "beside hostile code": []}
    await phase("warm-up", figures["warm-up"])
    for _ in range(2):
        await phase("alone", figures["alone"])
        stop = asyncio.Event()
        attackers = [CodeSession(url, "code", args.timeout) for _ in range(args.hostile)]
        running = [asyncio.create_task(load.guarded(attacks, f"hostile {i}", hostile(i, s, stop)))
                   for i, s in enumerate(attackers)]
        await asyncio.sleep(3.0)  # the pool busy with them before the learners move
        await phase("beside", figures["beside hostile code"])
        stop.set()
        await asyncio.gather(*running)
        await asyncio.gather(*(s.close() for s in attackers), return_exceptions=True)
    await asyncio.gather(*(s.close() for s in learners), return_exceptions=True)
    figures["errors"] = tally.errors  # type: ignore[assignment]
    figures["hostile"] = hostile_s
    figures["stops"] = stops + attacks.errors  # type: ignore[assignment]
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presses", type=int, default=12)
    ap.add_argument("--learners", type=int, default=30)
    ap.add_argument("--hostile", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=4, help="moves per learner in each phase")
    ap.add_argument("--timeout", type=float, default=60.0, help="per run, s")
    ap.add_argument("--moves-as-runs", action="store_true",
                    help="the learners' moves as script runs (class mode's path), not on the stage's socket")
    args = ap.parse_args()
    if not 10 <= args.presses <= 100 or not 1 <= args.learners <= 100 or not 1 <= args.hostile <= 20:
        ap.error("--presses 10..100, --learners 1..100, --hostile 1..20")
    load.Session.use_stage_socket = not args.moves_as_runs
    print(f"bench/bench_code.py: {load.CORES} cores; {load.load_line()}; learners' moves "
          f"{'as runs' if args.moves_as_runs else 'on the stage socket where offered'}", flush=True)
    print(load.reference_line(), flush=True)
    target = load.Target("serve")
    failed = False
    try:
        ready = target.wait_ready()
        settled = target.wait_settled()
        print(f"make serve ready after {ready:.1f} s, settled {settled:.1f} s later", flush=True)
        times, runs = press_to_graph(target.url, args.presses)
        median = statistics.median(times)
        print(f"\n(a) the default code, Ctrl+Enter to its graph drawn, {len(times)} presses, warm pool: "
              f"median {median:.0f} ms, p90 {load.pct(times, 90):.0f} ms, max {max(times):.0f} ms "
              f"(target <= {TARGET_PRESS_MS} ms: {'met' if median <= TARGET_PRESS_MS else 'MISSED'})")
        print(f"    each: {', '.join(f'{t:.0f}' for t in times)} ms; the run in the sandbox "
              f"(the page's Run figure): {', '.join(runs)}  {load.load_line()}", flush=True)
        failed = median > TARGET_PRESS_MS
        figures = asyncio.run(class_phases(target.url, args))
    finally:
        log = load.finish(target, [])
    alone, beside = figures["alone"], figures["beside hostile code"]
    ratio = load.pct(beside, 95) / load.pct(alone, 95)
    unnamed = [s for s in figures["stops"] if not any(w in s for w in LIMIT_WORDS)]
    print(f"\n(b) {args.learners} learners moving T on the Playground, {args.rounds} moves each a phase, "
          f"two phases of each:")
    for name in ("warm-up", "alone", "beside hostile code"):
        shown = figures[name]
        print(f"    {name:<20} moves {len(shown):>4}  p50 {load.pct(shown, 50):.2f} s  "
              f"p95 {load.pct(shown, 95):.2f} s  max {max(shown, default=float('nan')):.2f} s")
    print(f"    hostile code: {args.hostile} sessions, {len(figures['hostile'])} runs, each answered in "
          f"p50 {load.pct(figures['hostile'], 50):.1f} s, max {max(figures['hostile'], default=0):.1f} s; "
          f"{len(unnamed)} without a message naming a limit")
    errors = figures["errors"]
    met = ratio <= TARGET_RATIO and not errors and not unnamed
    print(f"    learners' p95 beside hostile code / alone: {ratio:.2f}x (target <= {TARGET_RATIO}x), "
          f"learners' errors {len(errors)} (target 0): {'met' if met else 'MISSED'}  {load.load_line()}")
    for line in [*errors[:5], *unnamed[:5]]:
        print("   ", line[:240])
    print("\nFigures are provisional when the box is busy: see the load averages above.")
    return 1 if failed or not met or log else 0


if __name__ == "__main__":
    sys.exit(main())
