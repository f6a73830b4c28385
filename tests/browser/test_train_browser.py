"""Train and predict in a real browser: train once at the defaults, and look at the result."""

import pytest

from harness.drive import screenshot, wait_for_run, wait_quiet
from harness.helpers import running_server

pytestmark = pytest.mark.browser


@pytest.fixture
def own_server():
    """A server of its own: in a server that served the other browser tests, the
    Stop click was seen to wait over a minute to interrupt the run (cause not found)."""
    with running_server() as url:
        yield url


def test_train_page_trains_and_shows_metrics_chart_and_step_graph(server, page):
    page.goto(f"{server}/train")
    wait_for_run(page)
    page.get_by_role("button", name="Train").click()
    wait_for_run(page, timeout=90_000)
    page.wait_for_selector("[data-testid='stDataFrame']", timeout=30_000)
    page.wait_for_selector("[data-testid='graph-view'][data-drawn-graph]", timeout=30_000)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg", timeout=30_000)
    text = page.inner_text("[data-testid='stMain']")
    assert "Persistence (tomorrow = today)" in page.content()
    assert "baseline wins" in text or "model beats both baselines" in text
    assert "Not financial advice" in text
    assert page.query_selector_all("[data-testid='stException']") == []
    page.set_viewport_size({"width": 1440, "height": 3400})  # Streamlit scrolls inside: grow to see it all
    wait_quiet(page)
    screenshot(page, "train")


def test_stop_interrupts_a_long_training_run(own_server, page):
    server = own_server
    # A deliberately heavy model: one epoch takes seconds, so Stop lands mid-training.
    page.goto(f"{server}/train?seq_len=60&hidden_size=128&num_layers=2&cell=lstm_loop&epochs=200")
    wait_for_run(page)
    page.get_by_role("button", name="Train").click()
    # Stop lands mid-training: once the bar reports an epoch running or done.
    page.locator("[data-testid='stProgress']").get_by_text("Epoch ").wait_for(timeout=60_000)
    page.locator("[data-testid='stMainBlockContainer']").get_by_role("button", name="Stop").click()
    # generous: on a busy CI box the interrupted epoch itself can take seconds
    wait_for_run(page, timeout=60_000)
    main = page.locator("[data-testid='stMainBlockContainer']")
    main.get_by_text("Training stopped").wait_for(timeout=30_000)
    assert page.query_selector_all("[data-testid='stDataFrame']") == []
    assert page.query_selector_all("[data-testid='stException']") == []
    screenshot(page, "train_stopped")
