"""Every page in a real browser: loads clean, and the graph grows under the keyboard.

Runs against `streamlit run app.py` on a free loopback port, driven by
Playwright with Debian's chromium.
"""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from harness.drive import (
    STREAMLIT_PROBES,
    overflowing_metrics,
    screenshot,
    settle_at,
    sidebar_closed,
    wait_for_run,
)
from harness.helpers import ROOT
from stockdemo.ui import PAGES, page_url

pytestmark = pytest.mark.browser
EXISTING = [(path, title) for path, title, _ in PAGES if (ROOT / path).exists()]

GRAPH = "[data-testid='graph-view'][data-drawn-graph]"  # the graph view once it has drawn


def real_console_errors(page) -> list[str]:
    return [e for e in page.console_errors
            if not ("404" in e and any(p in e for p in STREAMLIT_PROBES))]


def open_sidebar(page) -> None:
    """A stage page (the Playground) starts with its sidebar closed: open it as a learner would."""
    expand = page.get_by_test_id("stExpandSidebarButton")
    if expand.is_visible():
        expand.click()


def error_boxes(page) -> list[str]:
    return [e.inner_text() for e in page.query_selector_all("[data-testid='stException']")]


def test_deep_link_on_a_fresh_server_shows_the_full_page_frame(server, page):
    # First test of the session: nobody has opened "/" on this server yet.
    page.goto(f"{server}/playground")
    wait_for_run(page)
    open_sidebar(page)
    sidebar = page.locator("[data-testid='stSidebar']")
    # the menu's links appear once the front end has the app's page list
    sidebar.get_by_text("Home", exact=True).wait_for(timeout=20_000)
    assert sidebar.get_by_text("Playground").count() >= 1
    assert page.locator("h1").first.inner_text().endswith("Playground")
    assert error_boxes(page) == []


@pytest.mark.parametrize("path,title", EXISTING, ids=[t for _, t in EXISTING])
def test_every_page_loads_with_no_error_box_and_no_console_error(server, page, path, title):
    page.goto(server + page_url(path))
    wait_for_run(page)
    open_sidebar(page)
    assert page.locator("h1").first.inner_text().strip()
    page.locator("[data-testid='stSidebar']").get_by_text(title, exact=True).wait_for(timeout=20_000)
    assert error_boxes(page) == []
    assert real_console_errors(page) == []
    assert overflowing_metrics(page) == []
    screenshot(page, f"page_{Path(path).stem}")


def test_playground_slider_by_keyboard_grows_the_drawn_graph(server, page):
    page.goto(f"{server}/playground")
    wait_for_run(page)
    view = page.locator(GRAPH)
    before = int(view.get_attribute("data-nodes"))
    thumb = page.get_by_role("slider", name="Sequence length T")  # on the stage, above the graph
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_run(page)
    expect(view).not_to_have_attribute("data-nodes", str(before), timeout=20_000)
    assert int(view.get_attribute("data-nodes")) > before
    # the new picture is drawn (at the frame after it came, so waited for, not read at once)
    expect(view).to_have_attribute("data-drawn-graph", view.get_attribute("data-graph"))
    expect(page).to_have_url(re.compile(r"seq_len=6\b"), timeout=30_000)  # the stage settled on 6
    assert error_boxes(page) == [] and real_console_errors(page) == []
    screenshot(page, "playground_after_slider")


def test_home_run_it_in_the_browser_prints_a_10_by_1_tensor(server, page):
    page.goto(server + "/")
    wait_for_run(page)
    page.get_by_role("button", name="Run it").click()
    wait_for_run(page)
    text = page.locator("[data-testid='stCode']").last.inner_text()
    assert "grad_fn=<AddmmBackward0>" in text
    screenshot(page, "home_after_run")


def test_every_preset_is_shown_whole_at_laptop_and_phone_width(server, page):
    from stockdemo.config import PRESETS

    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{server}/playground")
    wait_for_run(page)
    presets = page.get_by_test_id("stMain").get_by_test_id("stExpander").filter(
        has_text="Presets for class")
    presets.locator("summary").click()  # under the stage, closed until asked for
    presets.get_by_role("button").first.wait_for()
    closed_when_wide = sidebar_closed(page)
    for width in (1280, 1400, 390):  # the open list, resized: the same state at each width
        settle_at(page, {"width": width, "height": 900}, closed_when_wide)
        box = presets.bounding_box()
        for preset in PRESETS:
            role = "button" if preset.page == "pages/playground.py" else "link"
            label = presets.get_by_role(role, name=preset.label)
            shown = label.bounding_box()
            # inside the expander, and not cut short (five equal columns once cut the last one)
            assert box["x"] <= shown["x"] and shown["x"] + shown["width"] <= box["x"] + box["width"] + 1, \
                (width, preset.label)
            assert label.evaluate("e => [e, ...e.querySelectorAll('*')]"
                                  ".every(n => n.scrollWidth <= n.clientWidth + 1)"), (width, preset.label)
