"""Train and predict in a real browser: train once at the defaults, and look at the result."""

import pytest

from tests.browser.drive import screenshot, wait_for_run

pytestmark = pytest.mark.browser


def test_train_page_trains_and_shows_metrics_chart_and_step_graph(server, page):
    page.goto(f"{server}/train")
    wait_for_run(page)
    page.get_by_role("button", name="Train").click()
    wait_for_run(page, timeout=90_000)
    page.wait_for_selector("[data-testid='stDataFrame']", timeout=30_000)
    page.wait_for_selector("[data-testid='stGraphVizChart'] svg g.node", timeout=30_000)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg", timeout=30_000)
    text = page.inner_text("[data-testid='stMain']")
    assert "Persistence (tomorrow = today)" in page.content()
    assert "baseline wins" in text or "model beats both baselines" in text
    assert "Not financial advice" in text
    assert page.query_selector_all("[data-testid='stException']") == []
    page.set_viewport_size({"width": 1440, "height": 3400})  # Streamlit scrolls inside: grow to see it all
    page.wait_for_timeout(800)
    screenshot(page, "train")
