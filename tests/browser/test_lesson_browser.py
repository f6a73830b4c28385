"""The lesson in a real browser, presenter mode at 1280×720: every step revealed and photographed."""

import re

import pytest
from playwright.sync_api import expect

from harness.drive import screenshot, wait_for_run
from stockdemo.lesson import STEPS

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720  # a common projector resolution


def bottom(locator) -> float:
    box = locator.bounding_box()
    return box["y"] + box["height"]


@pytest.fixture
def projector(browser):
    """A fresh session in a 1280×720 window, page errors collected."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    context.close()


def test_presenter_clicks_through_every_step_and_each_screen_fits(server, projector):
    page = projector
    page.goto(f"{server}/lesson?present=1")
    wait_for_run(page)
    for number, step in enumerate(STEPS, start=1):
        expect(page.get_by_text(f"Step {number} of {len(STEPS)}")).to_be_visible()
        expect(page.get_by_role("heading", name=f"{number}. {step.title}")).to_be_visible()
        page.get_by_role("button", name="Reveal the answer").click()
        wait_for_run(page, timeout=180_000)
        value = page.locator("[data-testid='stMetricValue']")
        value.wait_for(timeout=180_000)
        assert value.inner_text().strip()
        link = page.get_by_role("link", name=step.link_label)
        # The answer and the link to the experiment must be on screen without scrolling.
        assert bottom(value) <= HEIGHT and bottom(link) <= HEIGHT, f"step {number} overflows"
        page.mouse.move(0, 0)  # no hover tooltip in the picture
        screenshot(page, f"lesson_step_{number}")
        if number < len(STEPS):
            page.get_by_role("button", name="Next").click()
            wait_for_run(page)
    expect(page.get_by_role("button", name="Next")).to_be_disabled()
    assert page.errors == []


def test_a_steps_link_opens_the_page_with_its_settings_and_the_menu_returns(server, projector):
    page = projector
    page.goto(f"{server}/lesson?step=3")
    wait_for_run(page)
    step = STEPS[2]
    page.get_by_role("link", name=step.link_label).click()
    thumb = page.get_by_role("slider", name="Sequence length T")  # the Playground's stage
    wait_for_run(page, ready="[data-testid='graph-view'][data-drawn-graph]")
    assert thumb.input_value() == step.query["seq_len"]
    nodes = page.locator("[data-testid='sdMetric']", has_text="Graph nodes")
    shown = nodes.locator("[data-testid='sdMetricValue']").inner_text()
    assert f"T = {step.query['seq_len']}: {shown} nodes" in step.reveal().detail
    expand = page.get_by_test_id("stExpandSidebarButton")  # the stage starts with the menu closed
    if expand.is_visible():
        expand.click()
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Lesson", exact=True).click()
    wait_for_run(page)
    expect(page.get_by_role("heading", name=f"3. {step.title}")).to_be_visible()


@pytest.mark.parametrize(("width", "height", "query"), [(1440, 900, ""), (1280, 720, "&present=1")],
                         ids=["1440x900", "1280x720-presenter"])
@pytest.mark.parametrize("number", [1, 3])
def test_the_lesson_keeps_its_promise_read_the_question_guess_then_reveal_the_live_answer(
        server, browser, width, height, query, number):
    """"Read the question aloud, let the room guess, then press Reveal the answer: the answer
    is computed live." The question is on screen; the answer is not there before the press;
    after it, the figure a live run gives is, with its sentence, without scrolling."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(f"{server}/lesson?step={number}{query}")
        wait_for_run(page)
        step = STEPS[number - 1]
        question = page.get_by_role("heading", name=step.question.replace("`", ""))
        expect(question).to_be_visible()
        assert bottom(question) <= height  # read aloud from the projector, no scrolling
        assert not page.locator("[data-testid='stMetric']").count()  # the room guesses first
        button = page.get_by_role("button", name="Reveal the answer")
        assert bottom(button) <= height
        button.click()
        value = page.locator("[data-testid='stMetricValue']")
        value.wait_for(timeout=180_000)
        live = step.reveal()  # the same experiment, run here, now
        assert value.inner_text().strip() == live.value
        label = page.locator("[data-testid='stMetricLabel']").inner_text()
        assert label.strip() == live.label
        assert bottom(value) <= height
        words = re.sub(r"[`*]", "", live.detail)[:40]  # as the page renders its markdown
        expect(page.locator("[data-testid='stMain']").get_by_text(words)).to_be_visible()
    finally:
        context.close()
