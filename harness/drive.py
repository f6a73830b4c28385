"""Driving a Streamlit page in a real browser: wait for runs, take screenshots."""

from __future__ import annotations

from pathlib import Path

from harness.helpers import ROOT

SHOTS = ROOT / "artifacts" / "screenshots"  # what the browser tests and benchmarks shoot
VIEW = "[data-testid='graph-view']"  # the graph view on a page of the app

# Watches the page's socket to Streamlit: each rerun or stop the page sends is pending until the
# server reports a run that started after it has finished (ForwardMsg new_session, then
# script_finished with any status but "early, for a rerun"). Installed before the page's own
# scripts run (see ``watch_runs``); the messages are read at their top level only.
RUN_WATCH_JS = """
(() => {
  if (window.__sdRuns) return;
  // inputAt: the last input (or the page's load); a rerun it causes is sent a moment later.
  const s = window.__sdRuns = {pending: false, started: false, inputAt: performance.now(), sentAt: -1};
  for (const kind of ['pointerdown', 'keydown', 'input', 'paste', 'change']) {
    window.addEventListener(kind, () => { s.inputAt = performance.now(); }, true);
  }
  const varint = (b, i) => { let v = 0, m = 1; for (;;) { const x = b[i++]; v += (x & 127) * m;
      if (x < 128) return [v, i]; m *= 128; } };
  const fields = (b) => { const out = []; let i = 0;
    while (i < b.length) { let t, v; [t, i] = varint(b, i); const wire = t & 7;
      if (wire === 0) { [v, i] = varint(b, i); out.push([t >> 3, v]); }
      else if (wire === 2) { [v, i] = varint(b, i); out.push([t >> 3, null]); i += v; }
      else if (wire === 1) i += 8; else if (wire === 5) i += 4; else break; }
    return out; };
  const received = (b) => { for (const [field, value] of fields(b)) {
      if (field === 4 && s.pending) s.started = true;                   // new_session: a run began
      if (field === 6 && value !== 2 && s.started) s.pending = false;  // script_finished
  } };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!this.__sdWatched) {
      this.__sdWatched = true;
      this.addEventListener('message', (e) => {
        if (e.data instanceof ArrayBuffer) received(new Uint8Array(e.data));
        else if (e.data instanceof Blob) e.data.arrayBuffer().then(a => received(new Uint8Array(a)));
      });
    }
    const b = data instanceof Uint8Array ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : null;
    if (b && b.length && b[0] === 0x5a) { s.pending = true; s.started = false; s.sentAt = performance.now(); }
    if (b && b.length && b[0] === 0x3a) { s.pending = true; s.started = true; }    // stop_script
    return send.call(this, data);
  };
})();
"""
# An input with no rerun sent since is given SEND_GRACE_MS for its rerun to leave (a widget
# sends it from its own handler, after the event): the one time-based part, a bound on a
# condition (a send) that an input causing no rerun never meets.
SEND_GRACE_MS = 300
RUN_FINISHED_JS = """
(grace) => {
  const s = window.__sdRuns, app = document.querySelector("[data-testid='stApp']");
  if (!s || s.pending || !app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  return s.sentAt >= s.inputAt || performance.now() - s.inputAt > grace;
}
"""


def watch_runs(context) -> None:
    """Make every page of ``context`` watch its runs from its first script on (see RUN_WATCH_JS)."""
    if not getattr(context, "_sd_watching", False):
        context.add_init_script(RUN_WATCH_JS)
        context._sd_watching = True


def wait_for_run(page, timeout: float = 60_000, ready: str | None = "h1") -> None:
    """Wait until every run the page asked for so far has finished, and ``ready`` is on it.

    A click, a key or a page load makes the page send a rerun to the server; that rerun counts
    as finished only once the server has started a run after it and reported the run's end,
    so a caller cannot return before its action's run is over. A page opened before its
    context was watched (``watch_runs``) is watched from now on; for that first call, the app
    reporting "notRunning" after a run of its own (not its "initial" state) is the signal.
    """
    if not page.evaluate("() => !!window.__sdRuns"):
        watch_runs(page.context)
        page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']",
                               timeout=timeout)
        page.evaluate(RUN_WATCH_JS)
    else:
        page.wait_for_function(RUN_FINISHED_JS, arg=SEND_GRACE_MS, timeout=timeout)
    if ready:
        page.wait_for_selector(ready, timeout=timeout)


# Streamlit's theme breakpoint ("md"): an "auto" sidebar is closed at or below it. Streamlit
# works the sidebar's state out again at every change of the window's width (from this rule,
# as on a fresh load, while the learner has not toggled it), so one page stepped through
# sizes is in the state a fresh load at each size is in.
SIDEBAR_CLOSES_AT_PX = 768
# Streamlit reads the window's size through a 100 ms throttle: a layout is settled when
# nothing on the page moved for this many frames (about 170 ms at 60 frames a second).
QUIET_FRAMES = 10
SETTLED_JS = """
(want) => {
  const s = window.__sdSettle;
  const bar = document.querySelector('[data-testid="stSidebar"]');
  const app = document.querySelector('[data-testid="stApp"]');
  const moving = document.getAnimations().some(a => a.playState === 'running'
      && a.effect && a.effect.getTiming().iterations !== Infinity);
  const ready = (want.width === null || window.innerWidth === want.width)
      && (want.height === null || window.innerHeight === want.height) && app
      && app.getAttribute('data-test-script-state') === 'notRunning'
      && (want.collapsed === null || !bar || bar.getAttribute('data-collapsed') === String(want.collapsed))
      && !moving;
  const layout = [...document.querySelectorAll('[data-testid], canvas, svg')].map(e => {
      const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(','); }).join(';');
  if (!ready || layout !== s.layout) { s.layout = layout; s.quiet = 0; return false; }
  return ++s.quiet >= want.frames;
}
"""


def _wait_settled(page, width: int | None = None, height: int | None = None,
                  collapsed: bool | None = None) -> None:
    page.wait_for_function(SETTLED_JS, arg={"width": width, "height": height, "collapsed": collapsed,
                                            "frames": QUIET_FRAMES}, polling="raf", timeout=60_000)


def wait_quiet(page) -> None:
    """Wait until nothing moves: no script run, no transition, no element moved for QUIET_FRAMES."""
    page.evaluate("() => { window.__sdSettle = {layout: '', quiet: 0}; }")
    _wait_settled(page)


def sidebar_closed(page) -> bool:
    """Is the page's sidebar closed now? (Read on a wide screen: closed there = a stage page.)"""
    return page.locator("[data-testid='stSidebar']").get_attribute("data-collapsed") == "true"


def settle_at(page, viewport: dict, closed_when_wide: bool) -> None:
    """Resize the window to ``viewport`` and wait until the page's layout has settled there.

    Settled: the window that size, no script run, the sidebar in the state Streamlit gives a
    fresh load at that width (``closed_when_wide``: a page whose sidebar starts closed at any
    width), no transition running and no element moved for QUIET_FRAMES frames.
    """
    page.evaluate("() => { window.__sdSettle = {layout: '', quiet: 0}; }")
    page.set_viewport_size(viewport)
    _wait_settled(page, viewport["width"], viewport["height"],
                  closed_when_wide or viewport["width"] <= SIDEBAR_CLOSES_AT_PX)


def screenshot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def overflowing_metrics(page) -> list[str]:
    """Figures of ``ui.metric_row`` wider than their own box (they would run into the next one)."""
    return page.evaluate(
        "() => [...document.querySelectorAll(\"[data-testid='sdMetricValue']\")]"
        ".filter(d => d.scrollWidth > d.clientWidth + 1).map(d => d.innerText)")


# Streamlit's front end probes the page path for its endpoints before falling back
# to the root (e.g. /playground/_stcore/health); those 404s are not our errors.
STREAMLIT_PROBES = ("/_stcore/health", "/_stcore/host-config")
