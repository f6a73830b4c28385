"""The Debugging page in a real browser: opened by deep link, drawn without errors."""

import pytest

from tests.browser.drive import screenshot, wait_for_run

pytestmark = pytest.mark.browser


def test_debugging_deep_link_draws_heatmap_gradients_prints_and_inspector(server, page):
    # Tall enough for the whole page: Streamlit scrolls an inner element, so a
    # full-page screenshot only holds the viewport.
    page.set_viewport_size({"width": 1440, "height": 3800})
    page.goto(f"{server}/debugging?seq_len=20")
    wait_for_run(page)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg", timeout=30_000)
    screenshot(page, "debugging")
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stPlotlyChart']").count() == 2
    code = "\n".join(page.locator("[data-testid='stCode']").all_inner_texts())
    assert "layer 0, step t=0" in code
    # The inspector opens on the node that makes the last hidden state (T=20 -> step 19).
    markdown = "\n".join(page.locator("[data-testid='stMarkdown']").all_inner_texts())
    assert "L0.t19/Tanh0: TanhBackward0" in markdown
    assert page.locator("[data-testid='stDataFrame']").count() == 1
