"""No chart prints words over words: every page's plotly charts, read back in a real browser.

At 1440x900 and on a 390x844 phone (one page brought to its state once, then
resized: the same charts shown at each size), each chart is hovered (so plotly shows its
mode bar, as a tap does on a phone) and measured: its title, subtitle, legend,
axis titles, colour bar, annotations and mode bar must not intersect, must
stay inside the chart, and no annotation may sit on a data line
(harness/charts.py). Before this test: the x axis's title "date" over the
Train page's legend, "test (held out)" over the price line, the mode bar over
every title on a phone (issue 25).

Each page is brought to where its charts are (a tab, a trained model, a class
with an answer) and the number of charts is checked too, so an empty page
cannot pass.
"""

from __future__ import annotations

import re

import pytest

from harness.charts import chart_layouts, collisions
from harness.drive import settle_at, sidebar_closed, wait_for_run, wait_quiet
from stockdemo.config import url_value

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
WAIT = 180_000


@pytest.fixture
def screen(browser):
    """A fresh tab at the first size: a page is brought to its state there, then resized."""
    context = browser.new_context(viewport=VIEWPORTS["desktop"])
    page = context.new_page()
    yield page
    context.close()


def problems_on(page, expected_charts: int) -> list[str]:
    """Every chart on ``page``, hovered in turn and measured: what collides on it."""
    charts = page.locator(".js-plotly-plot")
    charts.first.wait_for(timeout=WAIT)
    wait_quiet(page)  # plotly's last relayout after the first draw
    assert charts.count() == expected_charts
    found = []
    for chart in charts.all():
        chart.scroll_into_view_if_needed()
        chart.hover(position={"x": 8, "y": 8})
        wait_quiet(page)  # the mode bar fades in
        where = chart.bounding_box()
        hovered = [c for c in chart_layouts(page)
                   if abs(c["left"] - where["x"]) < 2 and abs(c["top"] - where["y"]) < 2]
        assert len(hovered) == 1
        assert any(p["kind"] == "modebar" for p in hovered[0]["parts"]) or chart_without_mode_bar(chart)
        found += collisions(hovered)
    return found


def problems_at_each_size(page, expected_charts: int, closed_when_wide: bool) -> dict[str, list[str]]:
    """The page as it is now, resized to each viewport in turn: size -> what collides there.

    ``closed_when_wide``: its sidebar starts closed on a wide screen (``open_page`` says).
    """
    found = {}
    for name, viewport in VIEWPORTS.items():
        settle_at(page, viewport, closed_when_wide)
        found[name] = problems_on(page, expected_charts)
    return found


NONE_FOUND = {name: [] for name in VIEWPORTS}


def chart_without_mode_bar(chart) -> bool:
    """The Class page's chart turns plotly's mode bar off (stockdemo/ui/classmode/question_console.py)."""
    return chart.evaluate("p => p._context.displayModeBar === false")


def open_page(page, path: str) -> bool:
    """Open ``path`` and wait for its run -> whether its sidebar starts closed (read wide)."""
    page.goto(path)
    wait_for_run(page, timeout=WAIT)
    return sidebar_closed(page)


@pytest.mark.parametrize("panel", ["predictions", "ops", "size"])
def test_playground_charts(server, screen, panel):
    closed = open_page(screen, f"{server}/playground?panel={url_value('panel', panel)}")
    assert problems_at_each_size(screen, 1, closed) == NONE_FOUND


def test_debugging_charts(server, screen):
    closed = open_page(screen, f"{server}/debugging?num_layers=2")  # two panels, each with its label
    assert problems_at_each_size(screen, 2, closed) == NONE_FOUND


@pytest.mark.parametrize("lang", ["en", "zh_CN", "es"])  # a translation's longer words are placed too
@pytest.mark.parametrize(("experiment", "charts"), [("Different lengths", 1), ("Carried hidden state", 1),
                                                    ("no_grad", 1), ("What the graph costs", 2)])
def test_lab_charts(server, screen, experiment, charts, lang):
    closed = open_page(screen, f"{server}/lab?lab={experiment}&lang={lang}")
    assert problems_at_each_size(screen, charts, closed) == NONE_FOUND


def test_train_charts_before_and_after_training(server, screen):
    closed = open_page(screen, f"{server}/train")
    assert problems_at_each_size(screen, 1, closed) == NONE_FOUND  # the data, split by time
    screen.get_by_role("button", name="Train").click()
    screen.get_by_role("heading", name="How good is it?").wait_for(timeout=WAIT)
    wait_for_run(screen, timeout=WAIT)
    # the loss curves and the test days' forecasts
    assert problems_at_each_size(screen, 2, closed) == NONE_FOUND


def test_the_class_answers_chart(server, browser, screen):
    closed = open_page(screen, f"{server}/classroom")
    screen.get_by_role("button", name="Start a class").click()
    link = screen.locator("[data-testid='stMain'] [data-testid='stCode']").filter(has_text="class=").first
    link.wait_for(timeout=WAIT)
    student_context = browser.new_context(viewport={"width": 1280, "height": 900})
    student = student_context.new_page()
    open_page(student, link.inner_text())
    wait_for_run(screen, timeout=WAIT)  # the teacher's page done redrawing after the start
    picker = screen.get_by_test_id("stMain").get_by_test_id("stSelectbox").first
    picker.scroll_into_view_if_needed()
    picker.click()
    screen.get_by_role("option").nth(2).click()  # question 3: a number to give
    wait_for_run(screen, timeout=WAIT)
    screen.get_by_role("button", name="Open answers").click()
    box = student.locator("[data-testid='stForm'] input[type='number']")
    box.wait_for(timeout=WAIT)
    box.fill("36")
    student.get_by_role("button", name="Send my answer").click()
    # The class's answers are the teacher's to show: the chart is drawn once revealed.
    screen.get_by_text(re.compile(r"1 of \d+ connected have answered")).wait_for(timeout=WAIT)
    screen.get_by_role("button", name="Reveal now").click()
    screen.get_by_text("Median time to answer").wait_for(timeout=WAIT)
    screen.locator("[data-testid='stMain'] .js-plotly-plot").wait_for(timeout=WAIT)
    assert problems_at_each_size(screen, 1, closed) == NONE_FOUND
    student_context.close()


@pytest.mark.parametrize("path", ["/", "/static_vs_dynamic", "/lesson"])
def test_pages_without_plotly_charts_have_none(server, screen, path):
    """The rest of the app draws graphs and tables, not plotly charts: nothing to collide."""
    closed = open_page(screen, f"{server}{path}")
    wait_quiet(screen)  # anything drawn after the run is on the page
    for name, viewport in VIEWPORTS.items():
        settle_at(screen, viewport, closed)
        assert screen.locator(".js-plotly-plot").count() == 0, f"a plotly chart on {path} ({name})"
