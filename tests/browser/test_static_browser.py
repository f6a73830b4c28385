"""Static vs dynamic in a real browser: deep link, run the captures, every graph drawn."""

import re

import pytest
from playwright.sync_api import expect

from harness.drive import screenshot, wait_for_run

pytestmark = pytest.mark.browser

FX_CHART = "[data-testid='stGraphVizChart']"
GRAPH_VIEW = "[data-testid='graph-view']"  # the autograd graphs: stockdemo/ui/graph_view.py


def test_static_page_captures_draws_both_graphs_and_counts_a_recompile(server, page):
    page.goto(f"{server}/static_vs_dynamic")
    wait_for_run(page)
    page.get_by_role("button", name="Capture static graphs").click()
    wait_for_run(page, timeout=180_000)
    page.wait_for_selector(f"{FX_CHART} svg g.node", timeout=30_000)
    assert "torch.rnn_tanh" in page.locator(FX_CHART).inner_text()
    views = page.locator(GRAPH_VIEW)
    assert views.count() == 3  # this run's graph and the early-stop model's two
    for i in range(3):
        expect(views.nth(i)).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=30_000)
    recompiles = page.locator("[data-testid='sdMetric']", has_text="Recompiles")
    assert recompiles.locator("[data-testid='sdMetricValue']").inner_text() == "0"
    thumb = page.locator("[data-testid='stSlider']").first.get_by_role("slider")
    thumb.focus()
    thumb.press("ArrowRight")  # T 5 -> 6: a shape dynamo has not seen
    wait_for_run(page, timeout=180_000)
    assert recompiles.locator("[data-testid='sdMetricValue']").inner_text() == "1"
    assert page.query_selector_all("[data-testid='stException']") == []
    # Streamlit scrolls inside its own container: a tall viewport puts the whole page in the shot.
    page.mouse.move(0, 0)  # no tooltip left over from the click
    page.set_viewport_size({"width": 1440, "height": 4200})
    wait_for_run(page)
    screenshot(page, "static_vs_dynamic")
