"""The Lab in Chinese and Spanish in a real browser, at 1440x900 and at 1280x720 presenting:
every experiment opened from its translated tab, nothing cut off or running out of its box,
the page's lang set, and a screenshot of each (artifacts/screenshots/lab-LANG-SIZE-N.png)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from harness.drive import overflowing_metrics, screenshot, wait_for_run, wait_quiet
from stockdemo import lab
from stockdemo.i18n import NAMES, TAGS, speaking, tr

pytestmark = pytest.mark.browser

SIZES = {"1440x900": ({"width": 1440, "height": 900}, ""),
         "1280x720-present": ({"width": 1280, "height": 720}, "&present=1")}
# Text boxes a translation can make too narrow: tabs, the graph picker's buttons, metrics' labels,
# the choice a select box shows (in an input: "por semanas naturales" was cut to "por semanas nat").
CUT_OFF_JS = """() => [...document.querySelector("[data-testid='stMain']").querySelectorAll(
    "[role='tab'] *, [data-testid='stButtonGroup'] button *, [data-testid='sdMetricLabel'], "
    + "[data-testid='stMarkdownContainer'] p, [data-testid='stCaptionContainer'], "
    + "[data-testid='stSelectbox'] input")]
  .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'auto')
  .map(e => (e.value || e.innerText).slice(0, 60))"""
# The page itself must not scroll sideways (a word too long for its column pushes it).
SIDEWAYS_JS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_every_experiment_reads_whole_in_the_readers_language(server, browser, lang, size):
    viewport, query = SIZES[size]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        page.goto(f"{server}/lab?lang={lang}{query}")
        wait_for_run(page)
        # a component sets it, a moment after the page's first run
        expect(page.locator("html")).to_have_attribute("lang", TAGS[lang], timeout=30_000)
        for i, name in enumerate(lab.EXPERIMENTS):
            with speaking(lang):
                title = tr(name)
            page.get_by_role("tab", name=title, exact=True).click()
            wait_for_run(page)
            page.wait_for_selector("[data-testid='sdMetric']", timeout=60_000)
            expect(page.get_by_role("tab", selected=True)).to_have_text(title)
            wait_quiet(page)
            assert page.locator("[data-testid='stException']").count() == 0, name
            assert overflowing_metrics(page) == [], (name, size)
            assert page.evaluate(CUT_OFF_JS) == [], (name, size)
            assert page.evaluate(SIDEWAYS_JS) <= 1, (name, size)
            # the link names the experiment in English, whatever language its tab speaks
            assert ("lab=" not in page.url) if i == 0 else f"lab={name.replace(' ', '+')}" in page.url
            screenshot(page, f"lab-{lang}-{size}-{i + 1}")
    finally:
        context.close()


def test_a_language_picked_on_the_lab_keeps_the_open_experiment_its_graph_and_its_link(server, page):
    page.goto(f"{server}/lab?lab=Carried+hidden+state&lab_graph=Detached")
    wait_for_run(page)
    for lang in ("zh_CN", "es"):
        page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").first.click()
        page.get_by_role("option", name=NAMES[lang], exact=True).click()
        wait_for_run(page)
        with speaking(lang):
            tab, graph = tr("Carried hidden state"), tr("Detached")
        expect(page.get_by_role("tab", selected=True)).to_have_text(tab)
        expect(page.get_by_test_id("stButtonGroup").get_by_role("radio", checked=True)).to_have_text(graph)
        assert "lab=Carried+hidden+state" in page.url, page.url  # the link still names it in English
        assert page.locator("[data-testid='stException']").count() == 0
