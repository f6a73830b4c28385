"""Every page in a real browser: loads clean, and the graph grows under the keyboard."""

import pytest

from tests.browser.drive import screenshot, wait_for_run

pytestmark = pytest.mark.browser


# Streamlit's front end probes the page path for its endpoints before falling back
# to the root (e.g. /playground/_stcore/health); those 404s are not our errors.
STREAMLIT_PROBE = ("/_stcore/health", "/_stcore/host-config")


def real_console_errors(page) -> list[str]:
    return [e for e in page.console_errors
            if not ("404" in e and any(p in e for p in STREAMLIT_PROBE))]


def error_boxes(page) -> list[str]:
    return [e.inner_text() for e in page.query_selector_all("[data-testid='stException']")]


def test_playground_slider_by_keyboard_grows_the_drawn_graph(server, page):
    page.goto(f"{server}/playground")
    wait_for_run(page)
    page.wait_for_selector("[data-testid='stGraphVizChart'] svg g.node")
    before = page.locator("[data-testid='stGraphVizChart'] svg g.node").count()
    thumb = page.locator("[data-testid='stSlider']").first.get_by_role("slider")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_run(page)
    page.wait_for_function(
        "n => document.querySelectorAll(\"[data-testid='stGraphVizChart'] svg g.node\").length > n",
        arg=before, timeout=20_000)
    after = page.locator("[data-testid='stGraphVizChart'] svg g.node").count()
    assert after > before
    assert error_boxes(page) == []
    screenshot(page, "playground")
