"""Static vs dynamic in a real browser: deep link, run the captures, every graph drawn."""

import pytest

from tests.browser.drive import screenshot, wait_for_run

pytestmark = pytest.mark.browser

CHART_NODES = "[data-testid='stGraphVizChart'] svg g.node"


def test_static_page_captures_and_draws_eager_and_static_graphs(server, page):
    page.goto(f"{server}/static_vs_dynamic")
    wait_for_run(page)
    page.get_by_role("button", name="Capture static graphs").click()
    wait_for_run(page, timeout=180_000)
    page.wait_for_function(
        "n => document.querySelectorAll(\"[data-testid='stGraphVizChart']\").length >= n",
        arg=4, timeout=30_000)
    charts = page.locator("[data-testid='stGraphVizChart']")
    assert all(charts.nth(i).locator("svg g.node").count() > 0 for i in range(charts.count()))
    assert "torch.rnn_tanh" in charts.nth(1).inner_text()
    assert page.get_by_text("Recompiles").count() > 0
    assert page.query_selector_all("[data-testid='stException']") == []
    # Streamlit scrolls inside its own container: a tall viewport puts the whole page in the shot.
    page.mouse.move(0, 0)  # no tooltip left over from the click
    page.set_viewport_size({"width": 1440, "height": 4200})
    wait_for_run(page)
    screenshot(page, "static_vs_dynamic")
