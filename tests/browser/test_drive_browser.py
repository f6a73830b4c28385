"""drive.wait_for_run in a real browser: it returns once the run an action asked for has ended."""

from __future__ import annotations

import pytest

from harness.drive import wait_for_run
from harness.helpers import ROOT, free_port, start_server, stop_server

pytestmark = pytest.mark.browser
APP = ROOT / "tests" / "browser" / "apps" / "presses_app.py"


@pytest.fixture(scope="module")
def presses_url():
    port = free_port()
    proc = start_server(port, script=APP)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def pressed(page) -> str:
    """The run's last line as on the page now, read without waiting."""
    return page.locator("[data-testid='stMarkdown']").filter(has_text="Pressed").last.inner_text()


def test_after_a_load_and_each_press_the_runs_last_line_is_already_there(presses_url, page):
    page.goto(presses_url)
    wait_for_run(page)
    assert pressed(page) == "Pressed 0 times."
    for count in range(1, 6):
        page.get_by_role("button", name="Press").click()
        wait_for_run(page)
        assert pressed(page) == f"Pressed {count} times."


def test_a_page_opened_before_its_context_was_watched_is_waited_for_too(presses_url, browser):
    context = type(browser).new_context(browser)  # not conftest's: no watcher, as in bench/
    page = context.new_page()
    try:
        page.goto(presses_url)
        wait_for_run(page)
        assert pressed(page) == "Pressed 0 times."
        page.get_by_role("button", name="Press").click()
        wait_for_run(page)
        assert pressed(page) == "Pressed 1 times."
    finally:
        context.close()
