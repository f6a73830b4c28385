"""The Debugging page in a real browser: opened by deep link, drawn without errors."""

import pytest

from harness.drive import screenshot, wait_for_run, wait_quiet

pytestmark = pytest.mark.browser


def test_debugging_deep_link_draws_heatmap_gradients_prints_and_inspector(server, page):
    page.goto(f"{server}/debugging?seq_len=20")
    wait_for_run(page)
    page.wait_for_function(
        "() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
        ".filter(c => c.querySelector('.main-svg')).length == 2", timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stPlotlyChart']").count() == 2
    code = "\n".join(page.locator("[data-testid='stCode']").all_inner_texts())
    assert "layer 0, step t=0" in code
    # The inspector opens on the node that makes the last hidden state (T=20 -> step 19).
    markdown = "\n".join(page.locator("[data-testid='stMarkdown']").all_inner_texts())
    assert "L0.t19/Tanh0: TanhBackward0" in markdown
    assert page.locator("[data-testid='stDataFrame']").count() == 1
    # Streamlit scrolls an inner element, so a full-page screenshot holds only the
    # viewport: make it as tall as the page once everything has been drawn.
    page.set_viewport_size({"width": 1440, "height": 2700})
    wait_quiet(page)
    screenshot(page, "debugging")
