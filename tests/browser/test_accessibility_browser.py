"""axe-core over every page in Chromium: no serious or critical WCAG 2.0/2.1 A or AA violation,
and over the translated pages in Chinese and Spanish, with the page's ``<html lang>`` set.

axe-core comes from the npm registry (package.json, ``npm ci``; `make test` runs it).
Its file missing is a failure, not a skip: the check must run.
"""

import pytest
from playwright.sync_api import expect

from harness.axe import TAGS, axe_source, frame_css_applied
from harness.drive import screenshot, settle_at, sidebar_closed, wait_for_run
from harness.helpers import ROOT
from harness.learners import SHAPE_ERROR
from harness.loops import training_loop
from stockdemo.code.link import code_to_link
from stockdemo.i18n import TAGS as LANGUAGE_TAGS
from stockdemo.ui import PAGES, page_url

pytestmark = pytest.mark.browser

EXISTING = [(path, title) for path, title, _ in PAGES if (ROOT / path).exists()]
PHONE = {"width": 390, "height": 844}
WIDTHS = (390, 1024, 1280, 1440, 1920)  # a phone, a tablet, laptops and a projector
# Every page in each language but English (all translated: tests/test_i18n_pages.py), at a
# phone's, a laptop's and a projector's width.
IN_LANGUAGES = [(path, title, lang) for path, title in EXISTING for lang in ("zh_CN", "es")]
LANGUAGE_WIDTHS = (390, 1280, 1920)


def serious_violations(page) -> list[str]:
    """Run axe-core on the settled page -> one line per serious or critical violation."""
    frame_css_applied(page)
    if not page.evaluate("() => typeof axe === 'object'"):  # once per loaded page
        page.add_script_tag(content=axe_source())
    violations = page.evaluate(
        "async (tags) => (await axe.run(document, {runOnly: {type: 'tag', values: tags}})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary)}))", TAGS)
    return [f"{v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"][:5])
            for v in violations if v["impact"] in ("serious", "critical")]


def page_ready(page) -> None:
    """Wait for what arrives after the first run: the sidebar's link to every page, and each
    shown table's grid (its accessible table comes about a second after the run ends)."""
    page.wait_for_function(
        "(n) => document.querySelectorAll("
        "'[data-testid=\"stSidebar\"] [data-testid=\"stPageLink-NavLink\"]').length >= n"
        " && [...document.querySelectorAll('[data-testid=\"stDataFrame\"]')]"
        ".every(d => !d.checkVisibility() || d.querySelector('table'))",
        arg=len(EXISTING), timeout=60_000)


def open_once(browser, url: str, width: int, lang: str = "en"):
    """-> (context, page): ``url`` loaded at ``width`` (the widest first, as a projector shows it)
    and settled, its <html lang> the language's."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(url)
    wait_for_run(page)
    page_ready(page)
    page.wait_for_function("(tag) => document.documentElement.lang === tag", arg=LANGUAGE_TAGS[lang])
    return context, page


@pytest.fixture(scope="module", params=EXISTING, ids=[title for _, title in EXISTING])
def opened(request, server, browser):
    """One page loaded once, stepped through the widths.

    -> (page, its title, whether its sidebar starts closed at a wide screen: a stage page).
    """
    path, title = request.param
    context, page = open_once(browser, server + page_url(path), max(WIDTHS))
    yield page, title, sidebar_closed(page)
    context.close()


@pytest.fixture(scope="module", params=IN_LANGUAGES, ids=[f"{t}-{lang}" for _, t, lang in IN_LANGUAGES])
def opened_in(request, server, browser):
    """A translated page opened once in a language (``?lang=``), stepped through the widths."""
    path, title, lang = request.param
    context, page = open_once(browser, f"{server}{page_url(path)}?lang={lang}", max(LANGUAGE_WIDTHS), lang)
    yield page, f"{title} in {lang}", sidebar_closed(page)
    context.close()


def audit_at(opened_page, width: int) -> None:
    """The opened page settled at ``width``: no serious or critical violation."""
    page, title, closed_when_wide = opened_page
    settle_at(page, {"width": width, "height": 900}, closed_when_wide)
    found = serious_violations(page)
    assert found == [], f"{title} at {width} px:\n" + "\n".join(found)


@pytest.mark.parametrize("width", sorted(WIDTHS, reverse=True))
def test_no_serious_or_critical_wcag_violation_on_the_page(opened, width):
    # At every width: code that does not fit must wrap, not become a region to scroll
    # that a keyboard cannot reach (axe's scrollable-region-focusable, seen at 390-1280 px).
    audit_at(opened, width)


@pytest.mark.parametrize("width", sorted(LANGUAGE_WIDTHS, reverse=True))
def test_no_serious_or_critical_wcag_violation_in_chinese_and_spanish_with_lang_set(opened_in, width):
    audit_at(opened_in, width)


def test_no_serious_or_critical_wcag_violation_after_capturing_static_graphs(server, page):
    page.goto(f"{server}/static_vs_dynamic")
    wait_for_run(page)
    page.get_by_role("button", name="Capture static graphs").click()
    wait_for_run(page, timeout=180_000)
    page.locator("[data-testid='sdMetric']", has_text="Recompiles").wait_for(timeout=180_000)
    assert serious_violations(page) == []


def test_on_a_phone_the_sidebar_starts_closed_and_opens_on_request(server, browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(f"{server}/playground")
        wait_for_run(page)
        sidebar = page.locator("[data-testid='stSidebar']")
        assert sidebar.get_attribute("data-collapsed") == "true"
        box = sidebar.bounding_box()
        assert box is None or box["x"] + box["width"] <= 0  # off screen, not over the page
        assert page.get_by_role("heading", name="Playground").is_visible()
        screenshot(page, "phone_playground")
        page.locator("[data-testid='stExpandSidebarButton']").click()
        expect(sidebar).to_have_attribute("data-collapsed", "false")
    finally:
        context.close()


def test_no_serious_or_critical_wcag_violation_on_your_code_with_a_diff_an_error_and_a_film(server, page):
    page.goto(f"{server}/code")
    wait_for_run(page, ready="[data-testid='graph-view'][data-drawn-graph]")
    page.get_by_role("radio", name="skip connection", exact=True).click()  # the edit, shown as a diff
    page.locator(".ce-lesson").filter(has_text="Add node").wait_for()
    wait_for_run(page)
    assert serious_violations(page) == []
    page.goto(f"{server}/code?code={code_to_link(SHAPE_ERROR)}")  # a failing line, marked
    wait_for_run(page, ready=".sd-error-line")
    assert serious_violations(page) == []
    page.goto(f"{server}/code?code={code_to_link(training_loop('GRUCell'))}")  # the film's stepper
    wait_for_run(page, ready="[data-testid='graph-view'] [data-knob='film']")
    assert serious_violations(page) == []
