"""Every kind of control on every page, operated from the keyboard alone, in a real browser.

Only keys reach the page: Tab and Shift+Tab to move, arrows, Home and End, Enter,
Space, Escape and typing to operate. No mouse, no element.click(), .fill() or
.focus(). Every key press that should do something is followed by an assertion
on what it did: a URL parameter, a result on the page, another page.
"""

import re

import pytest
from playwright.sync_api import FileChooser, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from harness.drive import screenshot, wait_for_run
from stockdemo import RunConfig, run
from stockdemo.config import PRESENT
from stockdemo.lesson import STEPS
from stockdemo.ui import PAGES, page_url

pytestmark = pytest.mark.browser

WAIT = 60_000  # ms: generous, the box has 2 cores and may be running a benchmark
MAX_PRESSES = 100  # more Tab stops than any page has, so a miss fails instead of looping
HEADINGS = {path: "Dynamic graphs, live" if path == "app.py" else title for path, title, _ in PAGES}

FOCUSED = """() => { const e = document.activeElement;
  return e ? `${e.tagName} "${e.getAttribute('aria-label') || e.innerText.slice(0, 40)}"` : 'nothing'; }"""

# What draws a focus indicator on an element: its outline and its box-shadow ('' if neither).
RING = """e => { const s = getComputedStyle(e);
  const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0;
  return [outline ? `outline ${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}` : '',
          s.boxShadow !== 'none' ? `box-shadow ${s.boxShadow}` : ''].join(' ').trim(); }"""


def open_page(page: Page, url: str, ready: str) -> None:
    """Load a page and wait for its run and for ``ready``: widgets render a moment after the run ends."""
    page.goto(url)
    wait_for_run(page, timeout=WAIT, ready=ready)


def tab_to(page: Page, target: Locator, backwards: bool = False) -> None:
    """Press Tab (Shift+Tab) until ``target`` has the keyboard focus; fail after MAX_PRESSES."""
    target.wait_for(timeout=WAIT)
    key = "Shift+Tab" if backwards else "Tab"
    for _ in range(MAX_PRESSES):
        page.keyboard.press(key)
        # getRootNode: inside a component's shadow root, document.activeElement is its host
        if target.evaluate("e => e === e.getRootNode().activeElement"):
            return
    raise AssertionError(f"{MAX_PRESSES} x {key} never reached {target}; "
                         f"focus ended on {page.evaluate(FOCUSED)}")


def choose(page: Page, option: str) -> None:
    """In the focused select box: ArrowDown opens the list, typing filters it, Enter picks."""
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("listbox")).to_be_visible()
    page.keyboard.type(option)
    expect(page.get_by_role("option").first).to_contain_text(option)
    press_and_wait(page, "Enter")


def wait_for_param(page: Page, name: str, value: str | None) -> None:
    """The address bar holds ``name=value`` (None: no such parameter); bound widgets write it."""
    page.wait_for_function("([n, v]) => new URLSearchParams(location.search).get(n) === v",
                           arg=[name, value], timeout=WAIT)


def press_and_wait(page: Page, key: str) -> None:
    """A key that reruns the script: press it, then wait for the run to end."""
    page.keyboard.press(key)
    wait_for_run(page, timeout=WAIT)


def test_home_help_code_presenter_mode_run_it_and_its_link_work_by_keyboard(server, page):
    open_page(page, f"{server}/", ready="[data-testid='stBaseButton-primary']")
    sidebar = page.get_by_test_id("stSidebar")

    tab_to(page, sidebar.get_by_role("button", name="Help for Presenter mode"))
    tooltip = page.get_by_test_id("stTooltipContent")
    expect(tooltip).to_have_text(PRESENT.help)  # help shows on focus, not only on hover
    page.keyboard.press("Escape")
    expect(tooltip).to_be_hidden()

    tab_to(page, sidebar.get_by_role("switch", name="Presenter mode"), backwards=True)
    press_and_wait(page, "Space")
    wait_for_param(page, "present", "1")
    page.wait_for_function("() => getComputedStyle(document.documentElement).fontSize === '22px'",
                           timeout=WAIT)
    press_and_wait(page, "Space")
    wait_for_param(page, "present", None)

    tab_to(page, sidebar.locator("summary", has_text="Show this page's code"))
    code = sidebar.get_by_test_id("stCode")
    page.keyboard.press("Enter")
    expect(code).to_contain_text('"""Home:')
    page.keyboard.press("Enter")
    expect(code).to_be_hidden()

    tab_to(page, page.get_by_role("button", name="Run it"))
    press_and_wait(page, "Enter")
    expect(page.get_by_test_id("stMain").get_by_test_id("stCode").last).to_contain_text(
        "grad_fn=<AddmmBackward0>", timeout=WAIT)

    tab_to(page, page.get_by_role("link", name="See that graph in the Playground"))
    press_and_wait(page, "Enter")
    expect(page.locator("h1")).to_contain_text("Playground", timeout=WAIT)


def test_every_sidebar_menu_link_opens_its_page_by_keyboard(server, page):
    open_page(page, f"{server}/", ready="[data-testid='stPageLink-NavLink']")
    sidebar = page.get_by_test_id("stSidebar")
    for path, title, _ in (*PAGES[1:], PAGES[0]):  # round the menu and back Home
        link = sidebar.get_by_role("link", name=title)
        tab_to(page, link)
        assert "outline solid" in link.evaluate(RING)  # not only the hover grey
        press_and_wait(page, "Enter")
        expect(page).to_have_url(re.compile(re.escape(server + page_url(path)) + r"(\?.*)?$"), timeout=WAIT)
        expect(page.locator("h1")).to_contain_text(HEADINGS[path], timeout=WAIT)


def test_playground_controls_work_by_keyboard_and_show_a_focus_ring(server, page):
    open_page(page, f"{server}/playground", ready="[data-testid='graph-view'][data-drawn-graph]")
    main = page.get_by_test_id("stMain")
    view = page.get_by_test_id("graph-view")

    # The stage's own controls come first: T, then its step buttons, hidden size, layers, cell.
    slider = page.get_by_role("slider", name="Sequence length T")
    assert slider.evaluate(RING) == ""
    tab_to(page, slider)
    assert slider.evaluate(RING) != ""
    screenshot(page, "keyboard_focus_slider")
    page.keyboard.press("ArrowRight")
    wait_for_param(page, "seq_len", "6")
    expect(view.locator(".gv-change")).to_contain_text("+1 time step", timeout=WAIT)
    plus = view.get_by_role("button", name="Sequence length T: one more")
    tab_to(page, plus)
    assert slider.evaluate(RING) == "" and plus.evaluate(RING) != ""  # the ring moved with the focus
    page.keyboard.press("Enter")
    wait_for_param(page, "seq_len", "7")
    expect(slider).to_have_value("7")

    tab_to(page, page.get_by_role("combobox", name="Cell"))
    page.keyboard.press("ArrowDown")  # a native select: the next choice, nn.GRU
    wait_for_param(page, "cell", "nn.GRU")
    expect(view).to_have_attribute("data-nodes", str(len(run(RunConfig(seq_len=7, cell="gru")).graph.nodes)),
                                   timeout=WAIT)

    tab_to(page, main.locator("summary", has_text="Presets for class"))
    page.keyboard.press("Enter")
    preset = page.get_by_role("button", name="A deep stack")
    tab_to(page, preset)
    assert preset.evaluate(RING) != ""
    press_and_wait(page, "Enter")
    wait_for_param(page, "num_layers", "4")
    wait_for_param(page, "seq_len", "8")
    expect(slider).to_have_value("8")

    tab_to(page, main.locator("summary", has_text="More settings"))
    page.keyboard.press("Enter")
    seed = page.get_by_role("spinbutton", name="Seed")
    tab_to(page, seed)
    press_and_wait(page, "ArrowUp")
    wait_for_param(page, "seed", "1")
    page.keyboard.press("Control+A")
    page.keyboard.type("42")
    press_and_wait(page, "Enter")
    wait_for_param(page, "seed", "42")

    view = page.get_by_test_id("graph-view")
    before = view.bounding_box()
    fullscreen = view.locator("[data-act=fullscreen]")
    tab_to(page, fullscreen)
    assert fullscreen.evaluate(RING) != ""
    page.keyboard.press("Enter")
    expect(view).to_have_attribute("data-fullscreen", "1", timeout=WAIT)
    # The stage already spans the page's width: fullscreen gives it the whole screen.
    box = view.bounding_box()
    assert box["width"] >= before["width"]
    assert box["width"] * box["height"] > 1.2 * before["width"] * before["height"]
    page.keyboard.press("f")  # the view's own key leaves fullscreen (Escape is the browser's)
    expect(view).to_have_attribute("data-fullscreen", "0", timeout=WAIT)
    assert view.bounding_box()["width"] <= before["width"] + 1

    # The panels' picker (ui.panel_picker), a radio group: Tab reaches the open panel, the
    # arrows move to another, Enter opens it.
    panels = main.get_by_role("radiogroup", name="Panel")
    first = panels.get_by_role("radio", name="Predictions")
    tab_to(page, first)
    assert first.evaluate(RING) != ""
    page.keyboard.press("ArrowRight")
    ops = panels.get_by_role("radio", name="Ops by type")
    assert ops.evaluate("e => e === document.activeElement") and ops.evaluate(RING) != ""
    press_and_wait(page, "Enter")
    wait_for_param(page, "panel", "Ops by type")
    expect(ops).to_have_attribute("aria-checked", "true")
    expect(main.get_by_test_id("stDataFrame")).to_be_visible(timeout=WAIT)  # the ops table
    # The link and the downloads are under the last panel: Share this run
    tab_to(page, ops)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    press_and_wait(page, "Enter")
    wait_for_param(page, "panel", "Share this run")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    link = main.get_by_test_id("stCode").filter(has_text="/playground?")
    copy = link.locator("button")  # "Copy to clipboard": shown once the code block has the focus
    tab_to(page, link)
    expect(copy).to_be_visible()
    tab_to(page, copy)
    page.keyboard.press("Enter")
    page.wait_for_function("async link => (await navigator.clipboard.readText()) === link",
                           arg=link.inner_text().strip(), timeout=WAIT)
    assert "seed=42" in link.inner_text()

    tab_to(page, page.get_by_role("button", name="Download DOT"))
    with page.expect_download(timeout=WAIT) as download:
        page.keyboard.press("Enter")
    assert download.value.suggested_filename == "graph_rnn_T8.dot"  # the deep-stack preset came last


def open_file_chooser_by_keyboard(page: Page) -> FileChooser:
    """Tab to the uploader's button and press Enter: the file dialog opens.

    Once, in a full run from a fresh clone, the dialog did not open within 60 s
    (not reproduced in isolation; a redraw of the uploader taking the focus
    between Tab and Enter is the likely cause). Each try waits for the run to
    end and tabs to the button afresh; after three, fail saying where the focus was.
    """
    button = page.get_by_test_id("stFileUploaderDropzone").locator("button")
    seen = []
    for _ in range(3):
        wait_for_run(page, timeout=WAIT)
        tab_to(page, button)
        try:
            with page.expect_file_chooser(timeout=15_000) as chooser:
                page.keyboard.press("Enter")
            return chooser.value
        except PlaywrightTimeoutError:
            seen.append(page.evaluate(FOCUSED))
    raise AssertionError(f"Enter on the uploader's button never opened the file dialog; "
                         f"focus after each try: {seen}")


def test_train_upload_settings_train_and_download_by_keyboard(server, page, tmp_path):
    csv = tmp_path / "prices.csv"
    days = [f"2012-{1 + d // 28:02d}-{1 + d % 28:02d}" for d in range(300)]  # 300 days in date order
    csv.write_text("Date,Close\n" + "\n".join(f"{day},{100 + 5 * ((d * 7) % 11) / 11 + d / 10:.2f}"
                                              for d, day in enumerate(days)))
    open_page(page, f"{server}/train", ready="[data-testid='stBaseButton-primary']")

    tab_to(page, page.get_by_role("combobox", name="Data"))
    choose(page, "Upload a CSV")
    wait_for_param(page, "source", "Upload a CSV")

    open_file_chooser_by_keyboard(page).set_files(csv)  # the operating system's dialog, answered
    wait_for_run(page, timeout=WAIT)
    expect(page.get_by_text("prices.csv, column Close")).to_be_visible(timeout=WAIT)

    tab_to(page, page.get_by_test_id("stMain").locator("summary", has_text="Training settings"))
    page.keyboard.press("Enter")
    tab_to(page, page.get_by_role("slider", name="Max epochs"))
    press_and_wait(page, "Home")
    wait_for_param(page, "epochs", "1")
    tab_to(page, page.get_by_role("spinbutton", name="Seed"))
    press_and_wait(page, "ArrowUp")
    wait_for_param(page, "seed", "1")

    tab_to(page, page.get_by_role("button", name="Train"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="How good is it?")).to_be_visible(timeout=2 * WAIT)
    wait_for_run(page, timeout=WAIT)

    tab_to(page, page.get_by_role("button", name="Download test forecasts CSV"))
    with page.expect_download(timeout=WAIT) as download:
        page.keyboard.press("Enter")
    assert download.value.suggested_filename == "test_forecasts.csv"


def test_static_page_select_slider_capture_and_code_expander_by_keyboard(server, page):
    open_page(page, f"{server}/static_vs_dynamic", ready="[data-testid='stBaseButton-primary']")
    main = page.get_by_test_id("stMain")

    tab_to(page, page.get_by_role("combobox", name="Cell"))
    choose(page, "nn.GRU")
    wait_for_param(page, "cell", "nn.GRU")

    tab_to(page, page.get_by_role("slider", name="Sequence length T"))
    press_and_wait(page, "ArrowRight")
    wait_for_param(page, "seq_len", "6")
    expect(main.get_by_text("Eager autograd: recorded while this run's Python ran (T = 6)")).to_be_visible(
        timeout=WAIT)

    tab_to(page, page.get_by_role("button", name="Capture static graphs"))
    page.keyboard.press("Space")
    recompiles = page.get_by_test_id("sdMetric").filter(has_text="Recompiles")
    # the count starts at the press: T = 6 is its first graph
    expect(recompiles.get_by_test_id("sdMetricValue")).to_have_text("0", timeout=3 * WAIT)
    wait_for_run(page, timeout=3 * WAIT)

    tab_to(page, main.locator("summary", has_text="The captured graph as code"))
    page.keyboard.press("Enter")
    expect(main.get_by_test_id("stExpanderDetails").get_by_test_id("stCode")).to_contain_text(
        "def forward", timeout=WAIT)


def test_debugging_sliders_selects_settings_and_node_picker_by_keyboard(server, page):
    open_page(page, f"{server}/debugging", ready="[data-testid='stSelectbox']")
    main = page.get_by_test_id("stMain")

    tab_to(page, page.get_by_role("slider", name="Recurrent weight scale"))
    press_and_wait(page, "ArrowRight")
    wait_for_param(page, "weight_scale", "125")

    tab_to(page, page.get_by_role("combobox", name="RNN nonlinearity"))
    choose(page, "relu")
    wait_for_param(page, "nonlinearity", "relu")
    expect(main).to_contain_text("Recurrent weights at 125 %, relu", timeout=WAIT)

    tab_to(page, main.locator("summary", has_text="More settings"))
    page.keyboard.press("Enter")
    tab_to(page, page.get_by_role("spinbutton", name="Seed"))
    press_and_wait(page, "ArrowUp")
    wait_for_param(page, "seed", "1")

    tab_to(page, page.get_by_role("slider", name="Print at time step"))
    press_and_wait(page, "End")  # the last step of T = 5
    wait_for_param(page, "print_step", "4")
    expect(main.get_by_test_id("stCode").filter(has_text="layer 0, step t=4")).to_be_visible(timeout=WAIT)

    tab_to(page, page.get_by_role("combobox", name="Node of this run's graph"))
    choose(page, "L0.t0/")
    page.wait_for_function("() => (new URLSearchParams(location.search).get('node') || '')"
                           ".startsWith('L0.t0/')", timeout=WAIT)
    expect(main.locator("strong", has_text=re.compile(r"^L0\.t0/"))).to_be_visible(timeout=WAIT)


def test_lesson_next_back_reveal_and_experiment_link_by_keyboard(server, page):
    open_page(page, f"{server}/lesson", ready="[data-testid='stBaseButton-primary']")
    step = STEPS[2]

    tab_to(page, page.get_by_role("button", name="Next"))
    for number in (2, 3, 4):
        press_and_wait(page, "Enter")  # the focus stays on Next
        wait_for_param(page, "step", str(number))
    tab_to(page, page.get_by_role("button", name="Back"), backwards=True)
    press_and_wait(page, "Space")
    wait_for_param(page, "step", "3")
    expect(page.get_by_role("heading", name=f"3. {step.title}")).to_be_visible(timeout=WAIT)

    tab_to(page, page.get_by_role("button", name="Reveal the answer"))
    press_and_wait(page, "Enter")
    expect(page.get_by_test_id("stMetricValue")).to_have_text(step.reveal().value, timeout=WAIT)

    tab_to(page, page.get_by_role("link", name=step.link_label))
    press_and_wait(page, "Enter")
    expect(page).to_have_url(re.compile(re.escape(server + page_url(step.page)) + r"\?"), timeout=WAIT)
    expect(page.get_by_role("slider", name="Sequence length T")).to_have_value(
        step.query["seq_len"], timeout=WAIT)
