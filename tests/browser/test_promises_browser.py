"""Every page keeps the promise of its first sentence: done as it says, in a real browser.

Each test does exactly what its page's first sentence tells a newcomer to do, at
1440x900 and at 1280x720 in presenter mode (``?present=1``), and asserts that
what the sentence says to watch is on screen and happens: a number that climbs,
a curve that falls, a graph that grows. Numbers are checked against the run
itself (torch run here, or the page's own live data), never against constants.
(The Playground's, the Lesson's and the Class's promise tests are the lead's.)
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from harness.drive import screenshot, wait_for_run, wait_quiet
from stockdemo import lab
from stockdemo.config import RunConfig
from stockdemo.live import inspection
from stockdemo.live import run as live

pytestmark = pytest.mark.browser

MODES = {"laptop": ({"width": 1440, "height": 900}, {}),
         "presenter": ({"width": 1280, "height": 720}, {"present": "1"})}
WAIT = 180_000
GRAPH = "[data-testid='graph-view']"


@pytest.fixture(params=list(MODES))
def mode(request) -> str:
    return request.param


@pytest.fixture
def screen(browser, mode):
    viewport, _ = MODES[mode]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    yield page
    context.close()


def address(server: str, mode: str, path: str, **params: str) -> str:
    query = {**params, **MODES[mode][1]}
    return f"{server}{path}" + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def open_page(page, url: str) -> None:
    page.goto(url)
    wait_for_run(page, timeout=WAIT)


def shown(page, locator, share: float = 1.0) -> bool:
    """Is at least ``share`` of the element inside the viewport, as the learner sees it now?"""
    box = locator.bounding_box()
    if box is None or box["width"] == 0 or box["height"] == 0:
        return False
    size = page.viewport_size
    slack = 2  # px: sub-pixel layout puts a box scrolled to the edge 0.3 px past it
    seen_w = max(0.0, min(box["x"] + box["width"], size["width"] + slack) - max(box["x"], -slack))
    seen_h = max(0.0, min(box["y"] + box["height"], size["height"] + slack) - max(box["y"], -slack))
    return seen_w * seen_h >= share * box["width"] * box["height"] - 1


def starts_on_screen(page, locator, lines: int = 100) -> bool:
    """Does the element start on screen, with room below for its first ``lines`` px (a long text)?"""
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] <= page.viewport_size["height"] - lines


def metric_value(page, label: str) -> str:
    return (page.get_by_test_id("sdMetric").filter(has_text=label).first
            .get_by_test_id("sdMetricValue").inner_text())


def chart_data(locator) -> dict[str, list[float]]:
    """A plotly chart's traces as drawn: name -> y values (plotly's own, typed arrays decoded)."""
    return locator.locator(".js-plotly-plot").evaluate(
        "p => Object.fromEntries(p._fullData.map(t => [t.name, Array.from(t.y || [])]))")


# --- Home: "Read the seed example below, press Run it beside it, then open the Playground
# and watch the graph grow as you lengthen the sequence."

def test_home_run_it_prints_the_seed_output_and_the_playground_graph_grows(server, screen, mode):
    open_page(screen, address(server, mode, "/"))
    main = screen.get_by_test_id("stMain")
    seed = main.get_by_test_id("stCode").filter(has_text="class StockPredictor")
    run = screen.get_by_role("button", name="Run it")
    assert shown(screen, run) and starts_on_screen(screen, seed)  # no scrolling to start
    run.click()
    printed = main.get_by_test_id("stCode").filter(has_text="tensor(")
    printed.wait_for(timeout=WAIT)
    assert printed.inner_text().strip() == live.printed(RunConfig()).strip()  # the seed's own output
    link = screen.get_by_role("link", name="See that graph in the Playground")
    assert shown(screen, printed) and shown(screen, link)
    link.click()
    view = screen.locator(GRAPH)
    expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=WAIT)
    thumb = screen.get_by_role("slider", name="Sequence length T")
    sizes = [int(view.get_attribute("data-nodes"))]
    for _ in range(3):  # lengthen the sequence, one step at a time
        drawn = view.get_attribute("data-drawn-graph")
        thumb.focus()
        thumb.press("ArrowRight")
        expect(view).not_to_have_attribute("data-drawn-graph", drawn, timeout=WAIT)
        sizes.append(int(view.get_attribute("data-nodes")))
        assert shown(screen, thumb) and shown(screen, view, share=0.5)  # the control and the graph
    assert sizes == sorted(set(sizes)), f"the graph did not grow at every step: {sizes}"
    screenshot(screen, f"promise_home_{mode}")


# --- Train: "Press Train and watch the two losses part: the training loss falls ..., the
# validation loss does not ... Then read the table: does the model beat the naive forecast?"

REDRAWS_JS = """
() => {
  window.__redraws = [];
  new MutationObserver(() => {
    const chart = document.querySelector("[data-testid='stEChartsChart'] svg");
    if (!chart) return;
    const drawn = [...chart.querySelectorAll('path')].map(p => p.getAttribute('d')).join('|');
    if (drawn !== window.__lastDrawn) {
      window.__lastDrawn = drawn;
      window.__redraws.push(performance.now());
    }
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['d']});
}
"""


def test_train_the_curves_part_live_beside_the_button_and_the_table_answers(server, screen, mode):
    open_page(screen, address(server, mode, "/train"))
    train_button = screen.get_by_role("button", name="Train", exact=True)
    train_button.evaluate("e => e.scrollIntoView({block: 'start'})")  # where the learner looks
    screen.evaluate(REDRAWS_JS)
    pressed = time.perf_counter()
    train_button.click()
    progress = screen.get_by_test_id("stProgress")
    expect(progress).to_contain_text("Epoch", timeout=WAIT)  # a worker took the run
    live_chart = screen.get_by_test_id("stEChartsChart")
    live_chart.wait_for(timeout=WAIT)
    # While it trains (1.3-1.5 s at the defaults on a quick box: a fixed wait here once
    # outlasted the training): the curve, the progress and one Stop beside the button, all
    # on screen together.
    stops = screen.get_by_role("button", name="Stop")
    together, deadline, looks = False, time.monotonic() + WAIT / 1000, []
    while not together and time.monotonic() < deadline:
        visible = [stop for stop in stops.all() if stop.is_visible()]
        assert len(visible) <= 1, "two Stop buttons on screen"  # Streamlit's own is hidden
        parts = {"Train": train_button, "progress": progress, "curve": live_chart,
                 **({"Stop": visible[0]} if visible else {})}
        seen = {name: shown(screen, part) for name, part in parts.items()}
        looks.append(seen)
        together = len(seen) == 4 and all(seen.values())
        if not together and not stops.count() and screen.get_by_role(
                "heading", name="How good is it?").count():
            break  # trained before all were seen together
    if not together:
        screenshot(screen, f"promise_train_live_failed_{mode}")
    assert together, ("the curve, the progress and Stop were never on screen together while "
                      f"training; on screen at each look: {looks}")
    screenshot(screen, f"promise_train_live_{mode}")
    heading = screen.get_by_role("heading", name="How good is it?")
    heading.wait_for(timeout=WAIT)
    seconds = time.perf_counter() - pressed
    wait_for_run(screen, timeout=WAIT)
    redraws = screen.evaluate("() => window.__redraws")
    span = (redraws[-1] - redraws[0]) / 1000 if len(redraws) > 1 else 0.0
    rate = (len(redraws) - 1) / span if span else 0.0

    # What happened: read off the final curves, and said in words beside them.
    panel_chart = screen.locator("[data-testid='stPlotlyChart']").filter(
        has=screen.locator(".gtitle", has_text="Loss per epoch"))
    curves = chart_data(panel_chart)
    trained, checked = curves["training loss"], curves["validation loss"]
    summary = screen.get_by_test_id("stCaptionContainer").filter(has_text="s in all").inner_text()
    run_seconds = float(re.search(r"([\d.]+) s in all", summary).group(1))
    epochs_per_second = len(trained) / run_seconds
    print(f"\n[{mode}] Train at the defaults: {len(trained)} epochs in {run_seconds:.1f} s "
          f"({seconds:.1f} s from the press to the result); {len(redraws)} live redraws of the "
          f"curve over {span:.1f} s, {rate:.1f} a second")
    # At least 4 a second; on a box too busy to finish 4 epochs a second, every epoch drawn.
    assert rate >= min(4.0, 0.8 * epochs_per_second), f"the curve was redrawn {rate:.1f} times a second"
    assert trained[-1] < trained[0] * 0.97  # the training loss fell
    assert min(checked) > checked[0] * 0.97  # the validation loss did not
    words = screen.get_by_test_id("stMarkdown").filter(has_text="Training loss fell")
    assert "Validation loss did not fall" in words.inner_text()
    assert shown(screen, panel_chart, share=0.9) and shown(screen, words, share=0.5)

    # the model next to both baselines (the page's one table in sight: the others sit in
    # closed expanders)
    table = screen.get_by_test_id("stDataFrame").locator("visible=true").first
    table.scroll_into_view_if_needed()
    expect(screen.get_by_test_id("stMain")).to_contain_text("Persistence (tomorrow = today)")
    verdict = screen.get_by_test_id("stAlert").filter(has_text=re.compile("baseline wins|beats both"))
    wait_quiet(screen)  # the scroll has come to rest
    assert shown(screen, table), (table.bounding_box(), screen.viewport_size)
    assert verdict.count() == 1


# --- Static vs dynamic: "Press Capture static graphs, then move Sequence length T a few
# times and watch the recompile count climb ..."

PROGRESS_SEEN_JS = """
() => {
  window.__progressSeen = null;
  new MutationObserver(() => {
    const bar = document.querySelector("[data-testid='stProgress']");
    if (bar && !window.__progressSeen) {
      const r = bar.getBoundingClientRect();
      if (r.height > 0) window.__progressSeen = {top: r.top, bottom: r.bottom};
    }
  }).observe(document.body, {subtree: true, childList: true});
}
"""


def test_static_the_recompile_count_climbs_beside_the_control(server, screen, mode):
    open_page(screen, address(server, mode, "/static_vs_dynamic"))
    capture = screen.get_by_role("button", name="Capture static graphs")
    assert shown(screen, capture)
    screen.evaluate(PROGRESS_SEEN_JS)
    started = time.perf_counter()
    capture.click()
    screen.get_by_test_id("sdMetric").filter(has_text="Recompiles").first.wait_for(timeout=WAIT)
    took = time.perf_counter() - started
    wait_for_run(screen, timeout=WAIT)
    seen = screen.evaluate("() => window.__progressSeen")
    # Capture takes 2 s or less, or shows its steps while it runs, on screen under the button
    assert took <= 2.0 or seen is not None, f"Capture took {took:.1f} s and showed no progress"
    if seen is not None:
        assert seen["top"] >= 0 and seen["bottom"] <= screen.viewport_size["height"] + 2
    print(f"\n[{mode}] Capture: {took:.2f} s in the browser, progress {'shown' if seen else 'not needed'}")
    thumb = screen.get_by_role("slider", name="Sequence length T")
    count = screen.get_by_test_id("sdMetric").filter(has_text="Recompiles").first
    seen = [int(metric_value(screen, "Recompiles"))]
    for _ in range(3):  # a few new lengths
        thumb.focus()
        thumb.press("ArrowRight")
        expect(count.get_by_test_id("sdMetricValue")).to_have_text(str(seen[-1] + 1), timeout=WAIT)
        seen.append(int(metric_value(screen, "Recompiles")))
        assert shown(screen, thumb) and shown(screen, count)  # the control and the count, together
    wait_for_run(screen, timeout=WAIT)
    assert seen == [0, 1, 2, 3] and metric_value(screen, "Lengths since Capture") == "4"
    thumb.focus()
    started = time.perf_counter()
    thumb.press("ArrowLeft")  # back to a length dynamo has a graph for
    expect(screen.get_by_test_id("stMain")).to_contain_text("reused graph 3", timeout=WAIT)
    print(f"\n[{mode}] a move back to a captured T: {time.perf_counter() - started:.2f} s in the browser")
    wait_for_run(screen, timeout=WAIT)
    assert metric_value(screen, "Recompiles") == "3"  # an old length does not lower it
    screenshot(screen, f"promise_static_{mode}")


# --- Debugging: "Drag Sequence length T to 50 and watch the gradient line fall; then pick
# relu and a weight scale of 300 % and watch it shoot up instead."

def drag_slider_to(page, name: str, value: int) -> None:
    """Drag a slider's thumb as a mouse does, then settle it on ``value`` with the arrow keys.

    Streamlit's slider is react-aria's: an ``input type=range`` (min, max, its value) for
    the thumb, inside a group whose track spans its width.
    """
    thumb = page.get_by_role("slider", name=name)
    low, high = int(thumb.get_attribute("min")), int(thumb.get_attribute("max"))
    track = page.locator(f"[role='group'][aria-label='{name}'] > div").first.bounding_box()
    grip = page.locator(f"[role='group'][aria-label='{name}'] > div > div").nth(1).bounding_box()
    y = grip["y"] + grip["height"] / 2
    page.mouse.move(grip["x"] + grip["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(track["x"] + track["width"] * (value - low) / (high - low), y, steps=12)
    page.mouse.up()
    wait_for_run(page, timeout=WAIT)
    for _ in range(20):
        now = int(thumb.input_value())
        if now == value:
            return
        thumb.focus()
        thumb.press("ArrowRight" if now < value else "ArrowLeft")
        wait_for_run(page, timeout=WAIT)
    assert int(thumb.input_value()) == value


def gradient_line(page) -> list[float]:
    chart = page.locator("[data-testid='stPlotlyChart']").filter(
        has=page.locator(".gtitle", has_text="Gradient at each step"))
    chart.scroll_into_view_if_needed()
    assert shown(page, chart)  # the whole chart on screen
    return chart_data(chart)["layer 0"]


def test_debugging_the_gradient_line_falls_then_shoots_up(server, screen, mode):
    open_page(screen, address(server, mode, "/debugging"))
    drag_slider_to(screen, "Sequence length T", 50)
    line = gradient_line(screen)
    expected = inspection.inspect_run(RunConfig(seq_len=50), 1.0, "tanh").grad_norms[-1]
    assert line == pytest.approx(list(expected), rel=1e-5)  # the live run's own gradients
    assert line[0] < line[-1] * 1e-2  # back in time the line falls: the gradient vanishes

    nonlinearity = screen.get_by_role("combobox", name="RNN nonlinearity")
    nonlinearity.scroll_into_view_if_needed()
    nonlinearity.click()
    screen.get_by_role("option", name="relu").click()
    wait_for_run(screen, timeout=WAIT)
    scale = screen.get_by_role("slider", name="Recurrent weight scale (%)")
    scale.focus()
    scale.press("End")  # 300 %
    wait_for_run(screen, timeout=WAIT)
    assert scale.input_value() == "300"
    line = gradient_line(screen)
    expected = inspection.inspect_run(RunConfig(seq_len=50), 3.0, "relu").grad_norms[-1]
    assert line == pytest.approx(list(expected), rel=1e-5)
    assert line[0] > line[-1] * 1e2  # now it grows back in time: it shoots up
    screenshot(screen, f"promise_debugging_{mode}")


# --- Lab: "Pick an experiment and move its controls: each one runs for real, breaks the way
# it does in your own code, and shows torch's own message, the graph before and after, and
# the fix."

def test_lab_an_experiment_runs_breaks_and_shows_the_message_graphs_and_fix(server, screen, mode):
    open_page(screen, address(server, mode, "/lab"))
    screen.get_by_role("tab", name="Carried hidden state").click()
    wait_for_run(screen, timeout=WAIT)
    thumb = screen.get_by_role("slider", name="Batches in a row")
    batches = int(thumb.input_value()) + 1
    thumb.focus()
    thumb.press("ArrowRight")  # move its control: it runs again, for real
    expect(thumb).to_have_value(str(batches), timeout=WAIT)
    wait_for_run(screen, timeout=WAIT)
    result = lab.carried_state(lab.DetachConfig(batches=batches))
    carried = screen.get_by_test_id("sdMetric").filter(has_text=f"Nodes at batch {batches}, carried")
    expect(carried.get_by_test_id("sdMetricValue")).to_have_text(str(result.retained[-1].nodes))
    main = screen.get_by_test_id("stMain")
    message = main.get_by_test_id("stCode").filter(has_text=result.error.splitlines()[0][:60])
    message.scroll_into_view_if_needed()
    assert shown(screen, message)  # torch's own message, word for word, readable whole
    assert message.inner_text().strip() == result.error.strip()
    mistake = main.get_by_test_id("stCode").filter(has_text="the mistake")
    fix = main.get_by_test_id("stCode").filter(has_text="detach()")
    mistake.scroll_into_view_if_needed()
    assert shown(screen, mistake, share=0.5) and shown(screen, fix, share=0.5)  # side by side
    view = screen.locator(GRAPH).first
    picker = screen.get_by_test_id("stButtonGroup")
    expect(picker.get_by_role("radio", checked=True)).to_have_text("Carried")  # the mistake first
    expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=WAIT)
    view.scroll_into_view_if_needed()
    assert shown(screen, view, share=0.5)
    mistaken, nodes = view.get_attribute("data-drawn-graph"), int(view.get_attribute("data-nodes"))
    picker.get_by_role("radio", name="Detached").click()  # then the graph of the fix
    expect(view).not_to_have_attribute("data-drawn-graph", mistaken, timeout=WAIT)
    expect(view).to_have_attribute("data-drawn-graph", view.get_attribute("data-graph"), timeout=WAIT)
    view.scroll_into_view_if_needed()
    assert shown(screen, view, share=0.5)
    assert int(view.get_attribute("data-nodes")) < nodes  # detached: one batch of graph, not all
    screenshot(screen, f"promise_lab_{mode}")
