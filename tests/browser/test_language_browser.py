"""The session's language in a real browser: a Chinese browser gets Chinese, a link's ``?lang=es``
gets Spanish on an English browser, the sidebar's picker changes it and the links keep it, the
page's ``<html lang>`` follows, and the graph view's own controls, ARIA labels, tooltip and
replay speak it (their words come in its payload: stockdemo/render/words.py). A bound menu's
label in the address, written in one language, still opens the same choice in another."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from harness.axe import frame_css_applied
from harness.drive import wait_for_run
from harness.graph_view import VIEW
from stockdemo.config import CELL, LANG, SEQ_LEN
from stockdemo.i18n import NAMES, TAGS, speaking, tr
from stockdemo.render import words
from stockdemo.ui.routes import PAGES

pytestmark = pytest.mark.browser
SIDEBAR = "[data-testid='stSidebar']"
LINKS = f"{SIDEBAR} [data-testid='stPageLink-NavLink']"


def said(lang: str, msgid: str, **values: object) -> str:
    """``msgid`` as the app says it in ``lang`` (its own catalogs)."""
    with speaking(lang):
        return tr(msgid, **values)


def title(path: str) -> str:
    return next(t for p, t, _ in PAGES if p == path)


@pytest.fixture
def opened(browser):
    """-> open(url, locale): a page in a fresh context whose browser says ``locale``."""
    contexts = []

    def open_in(url: str, locale: str = "en-US"):
        context = browser.new_context(locale=locale, viewport={"width": 1440, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.goto(url)
        wait_for_run(page)
        return page
    yield open_in
    for context in contexts:
        context.close()


def expect_language(page, lang: str, heading: str = "Dynamic graphs, live") -> None:
    """The page's <html lang> and its title (``heading``'s msgid) say ``lang``."""
    page.wait_for_function("(tag) => document.documentElement.lang === tag", arg=TAGS[lang])
    expect(page.locator("h1").first).to_contain_text(said(lang, heading))


def lang_in(url: str) -> list[str]:
    return query(url).get("lang", [])


def link_langs(page) -> set[str]:
    page.locator(LINKS).first.wait_for()
    return {tuple(lang_in(h)) for h in page.locator(LINKS).evaluate_all("(a) => a.map(e => e.href)")}


def refusals(page) -> list[str]:
    """The page's warnings about a value of the link (each begins with its knob's name)."""
    return [t for t in page.get_by_test_id("stAlert").all_inner_texts()
            if any(t.startswith(said(x, CELL.label)) for x in NAMES)]


def pick_language(page, lang: str) -> None:
    """The sidebar's picker, as a learner uses it: open the menu, click the language's own name."""
    expand = page.get_by_test_id("stExpandSidebarButton")
    if expand.is_visible():
        expand.click()
    menu = page.locator(SIDEBAR).get_by_test_id("stSelectbox").filter(
        has_text=re.compile("|".join(said(x, LANG.label) for x in NAMES)))
    option = page.get_by_role("option", name=NAMES[lang], exact=True)
    wait_for_run(page)
    menu.click()
    try:
        option.wait_for(timeout=10_000)
    except PlaywrightTimeout:  # a rerun that began as it opened redrew the sidebar, menu closed
        wait_for_run(page)
        menu.click()
    option.click()
    wait_for_run(page)


def test_a_chinese_browser_opens_in_chinese_with_html_lang_zh_cn_and_clean_links(server, opened):
    page = opened(server + "/", locale="zh-CN")
    expect_language(page, "zh_CN")
    assert said("zh_CN", "Dynamic graphs, live") != "Dynamic graphs, live"
    assert lang_in(page.url) == [] and link_langs(page) == {()}  # the browser's own language needs no lang=


def test_lang_es_opens_spanish_the_picker_changes_it_and_the_links_keep_it(server, opened):
    page = opened(server + "/?lang=es")
    expect_language(page, "es")
    assert link_langs(page) == {("es",)}
    pick_language(page, "zh_CN")
    expect_language(page, "zh_CN")
    assert lang_in(page.url) == ["zh_CN"] and link_langs(page) == {("zh_CN",)}
    page.locator(LINKS).filter(has_text=said("zh_CN", title("pages/train.py"))).click()
    wait_for_run(page)
    expect_language(page, "zh_CN", title("pages/train.py"))  # the link kept it
    assert urlparse(page.url).path == "/train" and lang_in(page.url) == ["zh_CN"]
    pick_language(page, "en")
    expect_language(page, "en", title("pages/train.py"))
    assert lang_in(page.url) == []  # English is what this browser picks by itself


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_the_graph_views_controls_aria_labels_and_tooltip_speak_the_sessions_language(server, opened, lang):
    page = opened(f"{server}/static_vs_dynamic?lang={lang}")
    view = page.locator(VIEW).first
    expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=30_000)
    text = {k: said(lang, m) for k, m in words.VIEW.items()}
    expect(view.get_by_role("toolbar")).to_have_attribute("aria-label", text["graph_view"])
    expect(view.locator("[data-act=fit]")).to_have_text(text["fit"])
    expect(view.get_by_role("button", name=text["zoom_in"])).to_be_visible()
    canvas = view.locator("canvas").first
    expect(canvas).to_have_attribute("aria-label", f"{text['canvas']} {text['help']}")
    expect(canvas).to_have_attribute("aria-roledescription", text["graph_role"])
    tip = view.locator(".gv-tip dt")
    for _ in range(3):  # the box is where it was when measured: once the view is still
        page.mouse.move(0, 0)
        expect(view).not_to_have_attribute("data-moving", "1")
        box = page.evaluate("(v) => v.gvScreenBox('output')", view.element_handle())
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        try:
            tip.first.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            continue
    expect(tip.first).to_have_text(text["row_node"])
    assert text["row_node"] != words.VIEW["row_node"]


def test_the_stage_speaks_chinese_and_a_picked_language_relabels_the_view_in_place(server, opened):
    page = opened(f"{server}/playground?lang=zh_CN")
    view = page.locator(VIEW)
    expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=30_000)
    knob = said("zh_CN", SEQ_LEN.label)
    plus = view.get_by_role("button", name=said("zh_CN", words.VIEW["one_more"], knob=knob), exact=True)
    expect(plus).to_be_visible()
    expect(view.get_by_role("group", name=said("zh_CN", words.VIEW["settings"]))).to_be_visible()
    expect(page.locator("a.gv-skip")).to_have_text(said("zh_CN", words.VIEW["skip"]))
    expect(view.locator("[data-act=pin]")).to_have_text(said("zh_CN", words.VIEW["pin"]))
    drawn = view.get_attribute("data-drawn-graph")
    pick_language(page, "es")
    expect(view.locator("[data-act=fit]")).to_have_text(said("es", words.VIEW["fit"]))
    expect(page.locator("a.gv-skip")).to_have_text(said("es", words.VIEW["skip"]))
    assert view.get_attribute("data-drawn-graph") == drawn  # the same view, said again


def test_the_replay_status_speaks_the_sessions_language(server, opened):
    page = opened(f"{server}/playground?lang=es")
    view = page.locator(VIEW)
    view.locator("[data-act=replay]").click()
    wait_for_run(page)
    record = view.locator("[data-act=forward]")
    expect(record).to_have_text(said("es", words.VIEW["record"]), timeout=30_000)
    view.locator(".gv-speed").select_option("500")
    record.click()
    expect(view).to_have_attribute("data-playing", "0", timeout=30_000)
    status = view.get_attribute("data-status")
    assert status.startswith("Grabar (hacia adelante): ") and " · " in status, status


def test_a_menus_label_in_the_address_written_in_one_language_opens_the_same_choice_in_another(
        server, opened):
    """A bound menu writes the label it shows into the address. A link made in Chinese opens in
    Spanish on the same choice, and the address says it in Spanish; the language changed under
    it, the menu and the address say the new label, and moving another control keeps the choice
    (Streamlit would put a menu whose browser sent an old-language label back to its default)."""
    chinese, spanish = (said(lang, CELL.labels["gru_loop"]) for lang in ("zh_CN", "es"))
    page = opened(f"{server}/debugging?lang=es&cell={quote(chinese)}")
    expect(menu_value(page, "es")).to_have_value(spanish, timeout=30_000)
    assert query(page.url)["cell"] == [spanish] and not refusals(page)
    pick_language(page, "zh_CN")
    expect(menu_value(page, "zh_CN")).to_have_value(chinese)
    assert query(page.url)["cell"] == [chinese]
    page.get_by_test_id("stSlider").first.get_by_role("slider").press("ArrowRight")
    wait_for_run(page)
    expect(menu_value(page, "zh_CN")).to_have_value(chinese)
    assert query(page.url)["cell"] == [chinese] and query(page.url)["seq_len"] == ["6"]
    assert not refusals(page)


def menu_value(page, lang: str):
    """The cell menu's shown choice (its input), found by its label in ``lang``."""
    return page.get_by_test_id("stSelectbox").filter(has_text=said(lang, CELL.label)).locator("input")


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlparse(url).query)


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_on_a_phone_no_menu_cuts_its_choice_short_and_no_view_button_its_words(server, browser, lang):
    """Spanish runs about a quarter longer than English: a row of two menus cut "rendimiento del
    día siguiente" at 390 px until a phone's menus took a row each (ui/frame.py PHONE_CSS)."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        for path in ("/train", "/static_vs_dynamic"):
            page.goto(f"{server}{path}?lang={lang}")
            wait_for_run(page)
            frame_css_applied(page)  # a cold first run can paint before the frame's CSS
            settled_uncut(page)
            cut = page.evaluate(CUT_JS)
            assert cut == [], f"{path} in {lang} at 390 px cuts: {cut}"
    finally:
        context.close()


def settled_uncut(page) -> None:
    """Wait (a while, no longer) for nothing to be cut: the menus' text is laid out again as the
    page's fonts arrive; what is still cut then is the caller's to report."""
    try:
        page.wait_for_function(f"() => ({CUT_JS})().length === 0", timeout=15_000)
    except PlaywrightTimeout:
        pass


# Text wider than its box: a menu's shown choice, a button of the graph view.
CUT_JS = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stSelectbox"] input, [data-testid="graph-view"] button')]
  .filter(e => e.checkVisibility() && e.scrollWidth > e.clientWidth + 1)
  .map(e => e.value || e.textContent)"""
