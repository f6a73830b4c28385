"""The Your code page in a real browser: the editor (its test hook ``el.ceText()``,
stockdemo/ui/code_editor.py), its ready-made edits, and the graph of what it ran.

Counts are autograd's own: the code is run here too (``harness.learners.here``) and its graph
walked from ``predictions`` (``harness.autograd``)."""

from __future__ import annotations

from playwright.sync_api import Browser, Locator, Page, expect

from harness.autograd import ops_by_type
from harness.drive import VIEW, wait_for_run
from harness.learners import here
from stockdemo.code.edits import EDITS, apply

EDITOR = ".ce-root"


def nodes_of(source: str) -> int:
    """The Graph nodes figure for ``source`` counted from torch here: ``predictions``' autograd
    nodes, and the two every page draws besides (the data where it enters, the output)."""
    namespace, raised, _ = here(source)
    assert raised is None, raised
    return sum(ops_by_type(namespace["predictions"]).values()) + 2


def open_code(browser: Browser, server: str, query: str = "", size: tuple[int, int] = (1440, 900)) -> Page:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    page.goto(f"{server}/code{query}")
    wait_for_run(page, ready=f"{VIEW}[data-drawn-graph]")
    page.locator(".cm-content").wait_for()
    expect(page.locator(VIEW)).to_have_attribute("data-moving", "0")
    if "def forward" in text_in_editor(page):
        forward_in_view(page)
    return page


def forward_in_view(page) -> None:
    """Wait until the editor has scrolled its ``def forward`` line into its visible part."""
    scroller = page.locator(".cm-scroller").element_handle()
    line = page.locator(".cm-line").filter(has_text="def forward").first.element_handle()
    page.wait_for_function("([s, l]) => { const a = s.getBoundingClientRect(), b = l.getBoundingClientRect();"
                           " return b.top >= a.top && b.bottom <= a.bottom; }", arg=[scroller, line])


def figure(page: Page, label: str) -> Locator:
    metric = page.locator(VIEW).get_by_test_id("sdMetric").filter(has_text=label)
    return metric.get_by_test_id("sdMetricValue")


def text_in_editor(page) -> str:
    return page.locator(EDITOR).evaluate("el => el.ceText()")


def shows_graph_of(page, source: str) -> None:
    """Wait until the view draws the run of ``source``: autograd's node count, settled."""
    expect(figure(page, "Graph nodes")).to_have_text(f"{nodes_of(source):,}", timeout=60_000)
    wait_for_run(page, ready=None)
    expect(page.locator(VIEW)).to_have_attribute("data-moving", "0")


def editor_line(page: Page, text: str) -> Locator:
    return page.locator(".cm-line").filter(has_text=text).first


def retype_line(page, text: str, new: str) -> None:
    """Click the line holding ``text`` and type ``new`` over it, as a learner would."""
    editor_line(page, text).click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")  # back to the line's first character, after its indent
    page.keyboard.type(new)


def run_with_keys(page) -> None:
    page.locator(".cm-content").focus()
    page.keyboard.press("Control+Enter")


def wait_for_text(page, want: str) -> None:
    """Wait until the editor holds ``want`` (a ready-made edit, a link, the teacher's code)."""
    editor = page.locator(EDITOR).element_handle()
    page.wait_for_function("([el, want]) => el.ceText() === want", arg=[editor, want], timeout=60_000)


def pick(page, name: str) -> str:
    """Click a ready-made edit's pill -> its code, once the editor and the graph show it."""
    page.get_by_role("radio", name=EDITS[name].title, exact=True).click()  # a pill
    source = apply(EDITS[name])
    wait_for_text(page, source)
    shows_graph_of(page, source)
    forward_in_view(page)
    return source
