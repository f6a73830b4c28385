"""Driving a Streamlit page in a real browser: wait for runs, take screenshots."""

from __future__ import annotations

from pathlib import Path

from tests.browser.conftest import SHOTS


def wait_for_run(page, timeout: float = 60_000, ready: str = "h1") -> None:
    """Wait like Streamlit's own e2e tests: a short pause, then the app not running.

    ``ready`` must also be on the page: before the first run starts the app
    also reads "notRunning", so on a busy machine the pause alone can pass early.
    """
    page.wait_for_timeout(300)
    if ready:
        page.wait_for_selector(ready, timeout=timeout)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']",
                           timeout=timeout)
    page.wait_for_timeout(200)


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
