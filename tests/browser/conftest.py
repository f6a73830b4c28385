"""Real-browser fixtures: `streamlit run app.py` on a free loopback port, Debian's chromium.

These tests are required, never skipped: a missing browser or a server that
does not start fails the run with a message saying what to install.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.class_drive import SHORT_COUNTDOWN_S
from harness.helpers import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, stop_server
from stockdemo.config import COUNTDOWN_CHOICES

# A cold machine's first page (torch read from disk, the sandbox's parent warming up, Chromium's
# first paint) has taken over a minute on CI, where a warm one takes seconds: the session's
# server serves its first page once, with room for that, before any test times its pages.
FIRST_PAGE_MS = 300_000
ATTEMPT_MS = 60_000


@pytest.fixture(scope="session")
def server(browser):
    """A fresh server for the test session, its first page served, a short countdown among the
    teacher's: yields its base URL."""
    import time

    port = free_port()
    choices = ",".join(map(str, sorted({SHORT_COUNTDOWN_S, *COUNTDOWN_CHOICES})))
    proc = start_server(port, env={"STOCKDEMO_COUNTDOWN_CHOICES": choices})
    url = f"http://127.0.0.1:{port}"
    context = browser.new_context()
    started = time.monotonic()
    try:
        page = context.new_page()
        for attempt in range(FIRST_PAGE_MS // ATTEMPT_MS):  # a page stuck on a cold server is loaded again
            try:
                page.goto(url)
                page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning'] h1",
                                       timeout=ATTEMPT_MS)
                break
            except Exception as e:  # noqa: BLE001 - a timeout, or a load the server refused
                print(f"\nfirst page, attempt {attempt + 1}: {e}".splitlines()[0])
        else:
            stop_server(proc)
            pytest.fail(f"the server's first page did not finish within {FIRST_PAGE_MS // 1000} s")
    finally:
        context.close()
    print(f"\nfirst page served in {time.monotonic() - started:.1f} s")
    from harness.builds import start_builds

    start_builds()  # the image and the wheel's environment, now that the server is warm
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium). "
                    "Browser tests are required, not optional.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        b.new_context = _watching(b.new_context)
        yield b
        b.close()


def _watching(new_context):
    """``browser.new_context`` whose pages watch their runs from the first script on (drive.watch_runs)."""
    from harness.drive import watch_runs

    def new_watched_context(*args, **kwargs):
        context = new_context(*args, **kwargs)
        watch_runs(context)
        return context
    return new_watched_context


@pytest.fixture
def page(browser):
    """A fresh browser context (no cookies, no session) with console errors collected."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    pg = context.new_page()
    pg.console_errors = []
    pg.on("console", lambda m: pg.console_errors.append(f"{m.text} ({m.location.get('url')})")
          if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    yield pg
    context.close()


@pytest.fixture
def offline(browser):
    """A page whose context is offline and refuses every request but the file:// ones."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, offline=True)
    requested: list[str] = []

    def refuse(route):
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            requested.append(url)
            route.abort()

    context.route("**/*", refuse)
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    page.requested = requested
    yield page
    context.close()
