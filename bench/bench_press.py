"""Your code's Ctrl+Enter to the new graph's first frame, in a real browser, for the seed and each edit.

    python bench/bench_press.py [--presses 9] [--edits seed,skip,...] [--server URL] [--before CHECKOUT]
                                [--runs] [--trace FILE]

Starts what ``make run`` serves, ``deploy/replica_app.py`` (a Run goes on the code's own
socket, ``stockdemo/ui/code_route.py``, and the page's run follows the first frame), or with
``--runs`` plain ``streamlit run app.py`` (a host that runs app.py alone, such as Community
Cloud: a Run is a run of the page's fragment), on a free loopback port, unless ``--server``
names one already running, and opens /code in headless Chromium at 1440x900.
``--before`` starts a second server from another checkout (``git archive main | tar -x -C
/tmp/base``) and takes turns between the two, edit by edit, so the box's load falls on both. For
the seed and each ready-made edit (its pill first, not counted), each press appends a new
comment to the line that returns ``self.fc(...)`` (a text no cache has seen, so the sandbox
really runs it, and new node ids for that line, so the view draws a new picture), then
Ctrl+Enter. Timed in the page, ``performance.now()``, from the key's ``keydown`` to:

- ``send``: the Run leaving on a websocket (the code's, or Streamlit's for a rerun);
- ``payload``: the last websocket message before the view took its new payload (the view's
  delta, arriving after every element the script drew before it);
- ``update``: the view's ``update()`` starting (Streamlit's React work, the component's
  render and the payload's JSON parse between);
- ``frame``: the first frame that drew the new graph (the figure with the target, <= 100 ms);
- ``glide``: the transition over (``data-moving`` back to 0).

``--trace FILE`` then presses the seed once more under Chromium's own timeline (written to
FILE, for chrome://tracing or Perfetto) and prints the renderer's main-thread tasks from the key
to the first frame: what the browser was doing while the learner waited.

Prints median and p95 of each, per edit and for all presses. Medians, not a timed test: the
box's load is printed beside them (``bench/reference.py``'s figure too).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from playwright.sync_api import sync_playwright  # noqa: E402

from harness import measures  # noqa: E402
from harness.drive import wait_for_run  # noqa: E402
from harness.editor import editor_line, open_code, wait_for_text  # noqa: E402
from harness.helpers import CHROMIUM, CHROMIUM_ARGS, MAKE_RUN, ROOT, served_checkout  # noqa: E402
from stockdemo.code.edits import EDITS, apply, seed_source  # noqa: E402

TARGET_MS = 100
FC_LINE = "self.fc("  # every edit's forward ends in a line that calls it
PARTS = ("send", "payload", "update", "frame", "glide")

# The key's time, the socket's traffic after it, and the view's marks for the new graph.
RECORDER = """() => {
  const view = [...document.querySelectorAll('*')].map(e => e.shadowRoot
    && e.shadowRoot.querySelector("[data-testid='graph-view']")).find(Boolean);
  const r = window.__press = {key: -1, send: -1, messages: [], update: -1, frame: -1, glide: -1, graph: ''};
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.ctrlKey) Object.assign(r, {key: performance.now(), send: -1, messages: [],
                                                          update: -1, frame: -1, glide: -1,
                                                          graph: view.dataset.drawnGraph});
  }, true);
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (r.key >= 0 && r.send < 0) r.send = performance.now();
    if (!this.__sdPress) {
      this.__sdPress = true;
      this.addEventListener('message', (e) => {
        if (r.send >= 0 && r.frame < 0) r.messages.push(e.timeStamp);  // arrival, before any handler
      });
    }
    return send.call(this, data);
  };
  new MutationObserver(() => {
    const ds = view.dataset;
    if (r.key < 0) return;
    if (r.frame < 0 && ds.drawnGraph && ds.drawnGraph !== r.graph) {
      r.graph = ds.drawnGraph; r.frame = parseFloat(ds.drawnAt); r.update = parseFloat(ds.updatedAt);
    }
    if (r.frame >= 0 && r.glide < 0 && ds.moving === '0') r.glide = performance.now();
  }).observe(view, {attributes: true, attributeFilter: ['data-drawn-graph', 'data-moving']});
}"""
DONE = "() => window.__press.frame >= 0 && window.__press.glide >= 0"
READ = """() => { const r = window.__press, last = r.messages.filter(t => t <= r.update).pop() ?? -1;
  return {send: r.send - r.key, payload: last - r.key, update: r.update - r.key, frame: r.frame - r.key,
          glide: r.glide - r.key}; }"""


def pick(page, name: str) -> None:
    """The edit's pill (the seed: "the seed"), its text in the editor and its run drawn. (The
    editor takes a new text a frame after the page's run: typed before, the comment went into
    the text it replaced, and the press ran the edit unchanged, a graph already on screen.)"""
    title = "the seed" if name == "seed" else EDITS[name].title
    page.get_by_role("radio", name=title, exact=True).click()
    wait_for_text(page, seed_source() if name == "seed" else apply(EDITS[name]))
    wait_for_run(page, ready=None)


def press(page, i: int) -> dict[str, float]:
    """One comment more on the ``self.fc(`` line, Ctrl+Enter, and the parts' times (ms after the key)."""
    editor_line(page, FC_LINE).click()
    page.keyboard.press("End")
    page.keyboard.type(f"  # {i}")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(DONE, timeout=60_000, polling="raf")
    times = page.evaluate(READ)
    wait_for_run(page, ready=None)
    return times


def line(name: str, rows: list[dict[str, float]]) -> str:
    """A row of medians/p95 of each part."""
    cells = []
    for part in PARTS:
        values = [r[part] for r in rows]
        cells.append(f"{part} {statistics.median(values):.0f}/{measures.pct(values, 95):.0f}")
    return f"  {name:<18} n={len(rows):<3} " + "  ".join(cells)


TRACED = ("devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "toplevel")
SKIPPED = {"RunTask", "ThreadControllerImpl::RunTask", "V8.BytecodeBudgetInterruptWithStackCheck"}


def traced_press(browser, page, path: Path) -> list[str]:
    """One more press of the seed under Chromium's timeline -> its main-thread tasks over 0.8 ms
    and the socket's traffic, from the key to the first frame (ms after the key)."""
    browser.start_tracing(page=page, path=str(path), categories=list(TRACED))
    times = press(page, 10_000)
    browser.stop_tracing()
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
            and e["args"].get("name") == "CrRendererMain"}
    key = max(e["ts"] for e in events if e.get("name") == "EventDispatch"
              and e.get("args", {}).get("data", {}).get("type") == "keydown")
    end = key + times["frame"] * 1e3
    rows = []
    for e in events:
        socket = e.get("name", "").startswith("WebSocket")
        task = (e["pid"], e["tid"]) in main and e.get("ph") == "X" and e.get("dur", 0) > 800
        if (socket or task) and key <= e["ts"] <= end and e["name"] not in SKIPPED:
            data = e.get("args", {}).get("data", {})
            what = data.get("type") or data.get("functionName") or data.get("url", "")[-40:]
            at, took = (e["ts"] - key) / 1e3, e.get("dur", 0) / 1e3
            rows.append((e["ts"], f"{at:7.1f} {took:6.1f}  {e['name']} {what}"))
    return [row for _, row in sorted(rows)]


def measure(servers: dict[str, str], edits: list[str], presses: int,
            trace: Path | None = None) -> dict[str, dict[str, list]]:
    """-> each server's presses by edit; the servers take turns, edit by edit (who goes first alternates)."""
    out: dict[str, dict[str, list]] = {name: {} for name in servers}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        pages = {name: open_code(browser, url) for name, url in servers.items()}
        for page in pages.values():
            page.evaluate(RECORDER)
            press(page, 0)  # warms the sandbox's pool and the page's caches: not counted
        for k, edit in enumerate(edits):
            for name in list(pages)[::1 if k % 2 else -1]:
                pick(pages[name], edit)
                out[name][edit] = [press(pages[name], i) for i in range(1, presses + 1)]
                print(line(f"{edit} {name}", out[name][edit]), flush=True)
        if trace is not None:
            name = list(pages)[-1]
            pick(pages[name], "seed")
            print(f"{name}: the seed's press under Chromium's timeline ({trace}), main thread, "
                  "ms after the key (start, duration, task):")
            print("\n".join(traced_press(browser, pages[name], trace)))
        browser.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presses", type=int, default=9, help="per edit")
    ap.add_argument("--edits", default=",".join(["seed", *EDITS]),
                    help="seed and edit names, comma-separated")
    ap.add_argument("--server", help="a running app's URL (default: start one)")
    ap.add_argument("--before", type=Path, help="another checkout, served beside this one, turn about")
    ap.add_argument("--runs", action="store_true",
                    help="serve `streamlit run app.py` alone (each Run a run of the page's fragment)")
    ap.add_argument("--trace", type=Path, help="write Chromium's timeline of one more press of the seed here")
    args = ap.parse_args()
    edits = [e for e in args.edits.split(",") if e]
    if unknown := [e for e in edits if e != "seed" and e not in EDITS]:
        ap.error(f"unknown edits: {unknown}")
    print(f"bench/bench_press.py: {measures.load_line()}", flush=True)
    print(measures.reference_line(), flush=True)
    print(f"ms after Ctrl+Enter, median/p95 ({', '.join(PARTS)}):")
    with contextlib.ExitStack() as stack:
        script, env = ("app.py", {}) if args.runs else MAKE_RUN
        servers = {"this": args.server or stack.enter_context(served_checkout(ROOT, script, env))}
        if args.before:
            before = stack.enter_context(served_checkout(args.before.resolve(), script, env))
            servers = {"before": before, "after": servers["this"]}
        rows = measure(servers, edits, args.presses, args.trace)
    for name, by_edit in rows.items():
        every = [r for edit in edits for r in by_edit[edit]]
        print(line(f"all {name}", every))
        frames = [r["frame"] for r in every]
        frame = statistics.median(frames)
        print(f"{name}: Ctrl+Enter to the new graph's first frame: median {frame:.0f} ms, "
              f"p95 {measures.pct(frames, 95):.0f} ms (target <= {TARGET_MS} ms: "
              f"{'met' if frame <= TARGET_MS else 'MISSED'})  {measures.load_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
