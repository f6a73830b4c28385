"""A full class in a real browser, through make serve: the learner past capacity sees a page that
says so and gets in by itself once a seat frees; a learner already in can still reload.

deploy/serve.py with one replica and its capacity lowered to 3 (``--capacity 3``; the
hard cap is then 4), the full page's retry lowered to 3-4 s.
"""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from harness.drive import STREAMLIT_PROBES, wait_for_run
from harness.servers import Target

CAPACITY = 3


@pytest.fixture(scope="module")
def full_class():
    for program in ("/usr/sbin/haproxy", "/usr/bin/redis-server"):
        if not os.path.exists(program):
            pytest.fail(f"{program} is missing: apt-get install haproxy redis-server")
    os.environ["STOCKDEMO_FULL_RETRY_S"] = "3"
    try:
        target = Target("serve", replicas=1, options=("--capacity", str(CAPACITY)))
    finally:
        del os.environ["STOCKDEMO_FULL_RETRY_S"]
    try:
        target.wait_ready()
        yield target
    finally:
        target.stop()
        os.unlink(target.log.name)


def learner(browser, url: str):
    """A learner's own browser (its own cookies), with its console errors collected."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(f"{m.text} ({m.location.get('url')})")
            if m.type == "error" else None)
    response = page.goto(url)
    return context, page, response


def test_the_learner_past_capacity_sees_the_class_is_full_and_gets_in_once_a_seat_frees(full_class, browser):
    url = f"{full_class.url}/playground?seq_len=7"
    seated = []
    try:
        for _ in range(CAPACITY):
            context, page, response = learner(browser, url)
            assert response.status == 200
            wait_for_run(page)
            expect(page.locator("[data-testid='stApp']")).to_be_visible()
            seated.append((context, page))

        context, late, response = learner(browser, url)
        seated.append((context, late))
        assert response.status == 503
        retry = int(response.headers["retry-after"])
        assert 3 <= retry <= 4
        expect(late.get_by_role("heading", name="The class is full")).to_be_visible()
        expect(late.get_by_text(re.compile(rf"tries again by itself in {retry} seconds"))).to_be_visible()
        assert late.locator("[data-testid='stApp']").count() == 0  # a page, not a broken app
        assert late.title() == "The class is full: stockdemo"

        # A learner already in reloads: let in (up to the hard cap), the app as it was.
        first = seated[0][1]
        assert first.reload().status == 200
        wait_for_run(first)
        expect(first.locator("[data-testid='stApp']")).to_be_visible()

        # One learner leaves; the full page's own retry brings the late one in, at its address.
        seated[1][0].close()
        expect(late.locator("[data-testid='stApp']")).to_be_visible(timeout=30_000)
        wait_for_run(late)
        assert late.url == url
        expect(late.get_by_role("heading", name="The class is full")).to_have_count(0)
        # Besides the full page's own 503, only Streamlit's probes of the page's path (404).
        others = [e for e in late.console_errors if not (
            "404" in e and any(p in e for p in STREAMLIT_PROBES) or "503" in e and e.endswith(f"({url})"))]
        assert others == [] and any("503" in e for e in late.console_errors), late.console_errors
    finally:
        for context, _ in seated:
            context.close()


def test_an_upload_through_the_balancer_passes_streamlits_xsrf_check(full_class, browser, tmp_path):
    """Streamlit's XSRF cookie comes with a replica's health answer. HAProxy answers a browser's
    health checks itself only once it has the cookie; answering them all, it had kept the cookie
    from every browser, and Streamlit refused every upload (403)."""
    csv = tmp_path / "prices.csv"
    csv.write_text("Date,Close\n" + "\n".join(f"2012-{1 + d // 28:02d}-{1 + d % 28:02d},{100 + d / 10:.2f}"
                                              for d in range(300)))
    context, page, response = learner(browser, f"{full_class.url}/train?source=Upload+a+CSV")
    try:
        assert response.status == 200
        wait_for_run(page, ready="[data-testid='stFileUploaderDropzone']")
        assert "_streamlit_xsrf" in {c["name"] for c in context.cookies()}
        uploads = []
        page.on("response", lambda r: uploads.append(r.status) if "/_stcore/upload_file" in r.url else None)
        page.get_by_test_id("stFileUploaderDropzone").locator("input[type=file]").set_input_files(csv)
        expect(page.get_by_text("prices.csv, column Close")).to_be_visible(timeout=60_000)
        assert uploads and all(status < 300 for status in uploads), uploads
    finally:
        context.close()
