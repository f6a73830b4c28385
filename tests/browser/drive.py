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
