"""Classroom use in a real browser: a shared link reproduces the run; presenter mode reads at 720p."""

from urllib.parse import urlencode

import pytest

from harness.drive import screenshot, wait_for_run
from stockdemo import RunConfig, run
from stockdemo.config import url_value

pytestmark = pytest.mark.browser

SHARED = {"seq_len": 9, "hidden_size": 12, "num_layers": 2, "cell": "gru", "seed": 11}


def test_a_shared_link_shows_exactly_those_settings_and_predictions(server, browser):
    # A student opens the teacher's link in a brand-new browser context.
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    # the link as the app writes it: a select box's value as its menu shows it
    query = urlencode({k: url_value(k, v) for k, v in SHARED.items()})
    page.goto(f"{server}/playground?{query}")
    wait_for_run(page)
    page.wait_for_selector(".js-plotly-plot")
    # each slider by its label, not its place: the page may hold more sliders than these
    shown = [int(page.get_by_role("slider", name=label).input_value())
             for label in ("Sequence length T", "Hidden size", "Layers")]
    assert shown == [SHARED["seq_len"], SHARED["hidden_size"], SHARED["num_layers"]]
    assert "cell=nn.GRU" in page.url  # the address bar is still a faithful link
    original = run(RunConfig(**SHARED))
    nodes = page.locator("[data-testid='sdMetric']").filter(has_text="Graph nodes")
    assert f"{original.graph.stats['nodes']:,}" in nodes.inner_text()
    # the stars of the predictions chart hold the predicted values
    stars = page.evaluate(
        "() => { const p = document.querySelector('.js-plotly-plot');"
        " return Array.from(p._fullData[p._fullData.length - 1].y); }")
    expected = original.predictions[:8, 0].tolist()
    assert stars == pytest.approx(expected, abs=1e-6)  # float32 values, shown as drawn
    context.close()


def test_presenter_mode_at_720p_shows_the_graph_with_large_type(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(f"{server}/playground?present=1&seq_len=6")
    wait_for_run(page)
    page.wait_for_selector("[data-testid='graph-view'][data-drawn-graph]")
    assert page.evaluate("() => parseFloat(getComputedStyle(document.documentElement).fontSize)") >= 22
    sidebar_right = page.locator("[data-testid='stSidebar']").evaluate(
        "e => e.getBoundingClientRect().right")
    assert sidebar_right <= 1  # collapsed: off screen
    width = page.locator("[data-testid='graph-view']").bounding_box()["width"]
    assert width > 0.85 * 1280
    screenshot(page, "playground_presenter_720p")
    page.locator("[data-testid='graph-view']").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot(page, "playground_presenter_720p").with_name(
        "playground_presenter_720p_graph.png")))
    context.close()
