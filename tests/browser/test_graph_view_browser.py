"""The interactive graph view in Chromium: zoom, hover, select by click and by link, replay,
the keyboard, and a phone's touch screen.

Node positions come from ``stockdemo.layout.steps.layout`` run here on the same config: the
browser must draw each node where the server placed it.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from harness.drive import screenshot, wait_for_run, wait_quiet
from harness.graph_view import (
    attr,
    open_playground,
    play_to_end,
    second_backward_error,
    turn_replay_on,
    until,
)
from stockdemo import RunConfig, run
from stockdemo.layout.steps import layout

pytestmark = pytest.mark.browser


def screen_xy(page, view, node) -> tuple[float, float]:
    """Where the browser draws ``node`` (a PlacedNode), in page coordinates."""
    box = view.locator("canvas").bounding_box()
    k, tx, ty = (float(attr(view, n)) for n in ("scale", "tx", "ty"))
    return box["x"] + node.x * k + tx, box["y"] + node.y * k + ty


def placed(config: RunConfig, node_id: str, view: str = "unrolled"):
    picture = layout(run(config).graph, view, max_nodes=None)
    return next(p for p in picture.nodes if p.id == node_id)


def test_wheel_and_keys_zoom_and_fit(page, server):
    view = open_playground(page, server)
    fitted = float(attr(view, "scale"))
    canvas = view.locator("canvas")
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -400)
    until(view, "scale", lambda k: k > fitted * 1.2)
    view.locator("[data-act=fit]").click()
    expect(view).to_have_attribute("data-scale", f"{fitted:.4f}")
    canvas.focus()
    page.keyboard.press("+")
    page.keyboard.press("+")
    until(view, "scale", lambda k: k == pytest.approx(fitted * 1.25 ** 2, rel=0.01))
    page.keyboard.press("-")
    until(view, "scale", lambda k: k == pytest.approx(fitted * 1.25, rel=0.01))
    tx = float(attr(view, "tx"))
    page.keyboard.press("ArrowLeft")
    until(view, "tx", lambda x: x > tx)
    page.keyboard.press("0")
    expect(view).to_have_attribute("data-scale", f"{fitted:.4f}")


def test_hover_shows_the_nodes_details_and_a_click_puts_it_in_the_link(page, server):
    config = RunConfig()
    view = open_playground(page, server)
    turn_replay_on(page, view)
    graph = run(config).graph
    tanh = next(n for n in graph.op_nodes if n.step == 2 and n.label == "Tanh")
    x, y = screen_xy(page, view, placed(config, tanh.id))
    page.mouse.move(x, y)
    expect(view).to_have_attribute("data-hover", tanh.id)
    tip = view.locator(".gv-tip")
    expect(tip).to_be_visible()
    text = tip.inner_text()
    assert tanh.op in text and "10×10" in text and "t 2, layer 0" in text
    assert re.search(r"\d+ tensors?, [\d.]+ (B|KB)", text)  # what autograd saved for backward
    assert "stockdemo/model.py" in text  # the forward line that created it
    page.mouse.click(x, y)
    wait_for_run(page)
    expect(view).to_have_attribute("data-selected", tanh.id)
    assert parse_qs(urlsplit(page.url).query)["node"] == [tanh.id]
    link = page.get_by_role("link", name=re.compile("inspect what autograd saved"))
    assert parse_qs(urlsplit(link.get_attribute("href")).query)["node"] == [tanh.id]
    screenshot(page, "graph_view_selected")

    # The link opens on the same node, in a fresh tab.
    fresh = page.context.new_page()
    again = open_playground(fresh, server, urlsplit(page.url).query)
    expect(again).to_have_attribute("data-selected", tanh.id)
    fresh.close()


def test_a_link_to_an_unknown_node_selects_nothing_and_says_so(page, server):
    view = open_playground(page, server, "node=L7.t99/Nope0")
    expect(view).to_have_attribute("data-selected", "")
    expect(page.get_by_text("which this run's graph does not have")).to_be_visible()


def test_record_and_backward_play_to_the_end(page, server):
    view = open_playground(page, server)
    turn_replay_on(page, view)
    view.locator("[data-act=forward]").click()
    play_to_end(view, "forward")
    graph = run(RunConfig()).graph
    assert attr(view, "frames") == str(len(graph.op_nodes))  # one frame per op autograd created
    assert view.locator(".gv-code li.gv-now").count() == 1  # the line of forward that ran
    # every line of the code panel readable whole: long ones wrap, none runs out of the panel
    code = view.locator(".gv-code")
    assert code.evaluate("c => c.scrollWidth <= c.clientWidth + 1")
    lines = code.locator("li").all_inner_texts()
    assert any("return self.fc(out[:, -1, :])" in " ".join(t.split()) for t in lines), lines
    view.locator("[data-act=backward]").click()
    play_to_end(view, "backward")
    error = view.locator(".gv-ending")
    expect(error).to_be_visible()
    assert second_backward_error() in error.inner_text()
    # Step back one frame: the graph is not freed yet, the parameters hold their .grad.
    view.locator("[data-act=prev]").click()
    expect(error).to_be_hidden()
    assert ".grad" in attr(view, "status")


def test_everything_from_the_keyboard(page, server):
    config = RunConfig()
    view = open_playground(page, server)
    turn_replay_on(page, view)
    canvas = view.locator("canvas")
    canvas.focus()
    fitted = float(attr(view, "scale"))
    page.keyboard.press("=")
    until(view, "scale", lambda k: k > fitted)
    page.keyboard.press("0")
    # Shift+arrows walk the nodes and show their details; Enter selects.
    page.keyboard.press("Shift+ArrowRight")
    first = attr(view, "cursor")
    assert first
    page.keyboard.press("Shift+ArrowRight")
    second = attr(view, "cursor")
    assert second and second != first
    assert placed(config, second).x > placed(config, first).x
    expect(view.locator(".gv-tip")).to_contain_text(second)
    page.keyboard.press("Enter")
    wait_for_run(page)
    expect(view).to_have_attribute("data-selected", second)
    assert parse_qs(urlsplit(page.url).query)["node"] == [second]
    # Space plays the replay; Tab reaches the replay's buttons, Enter presses them.
    canvas.focus()
    page.keyboard.press(" ")
    expect(view).to_have_attribute("data-mode", "forward")
    view.locator("[data-act=backward]").focus()
    page.keyboard.press("Enter")
    expect(view).to_have_attribute("data-mode", "backward")
    view.locator(".gv-speed").focus()
    page.keyboard.press("End")  # the fastest speed
    page.keyboard.press("Shift+Tab")  # back to Step ▶
    expect(view).to_have_attribute("data-playing", "0", timeout=30_000)
    assert attr(view, "frame") == attr(view, "frames")
    expect(view.locator(".gv-ending")).to_be_visible()


def test_pinch_and_tap_on_a_phone(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                  is_mobile=True, device_scale_factor=2)
    page = context.new_page()
    try:
        view = open_playground(page, server)
        close = page.locator("[data-testid='stSidebarCollapseButton'] button")
        if close.is_visible():  # a phone may open with the menu over the page
            close.tap()
            page.wait_for_selector("[data-testid='stSidebar'][data-collapsed='true']")
            wait_quiet(page)  # the menu's slide is over
        view.scroll_into_view_if_needed()
        fitted = float(attr(view, "scale"))
        box = view.locator("canvas").bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = page.context.new_cdp_session(page)

        def touch(kind: str, spread: float) -> None:
            points = [] if kind == "touchEnd" else [
                {"x": cx - spread, "y": cy, "id": 0}, {"x": cx + spread, "y": cy, "id": 1}]
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

        touch("touchStart", 20)
        for spread in (40, 60, 80):
            touch("touchMove", spread)
        touch("touchEnd", 0)
        until(view, "scale", lambda k: k > fitted * 2.5)  # fingers four times as far apart
        screenshot(page, "graph_view_phone_pinched")

        view.locator("[data-act=fit]").tap()
        expect(view).to_have_attribute("data-scale", f"{fitted:.4f}")
        config = RunConfig()
        node = next(n for n in run(config).graph.op_nodes if n.step == 4 and n.label == "Tanh")
        x, y = screen_xy(page, view, placed(config, node.id))
        page.touchscreen.tap(x, y)
        wait_for_run(page)
        expect(view).to_have_attribute("data-selected", node.id)
        assert parse_qs(urlsplit(page.url).query)["node"] == [node.id]
    finally:
        context.close()


def test_unrolled_view_draws_every_node_of_the_largest_run(page, server):
    config = RunConfig(seq_len=200, num_layers=4, cell="gru")
    view = open_playground(page, server, "seq_len=200&num_layers=4&cell=gru&view=unrolled")
    expect(view).to_have_attribute("data-nodes", str(len(run(config).graph.nodes)), timeout=60_000)


def test_the_backward_ending_reads_whole_on_a_projector(browser, server):
    """The replay's punchline, torch's own error on a second backward(), at 1280x720 presenting."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        view = open_playground(page, server, "present=1")
        turn_replay_on(page, view)
        view.locator("[data-act=backward]").click()
        play_to_end(view, "backward")
        ending = view.locator(".gv-ending")
        expect(ending).to_be_visible()
        assert second_backward_error() in " ".join(ending.inner_text().split())
        # Every line on screen: nothing to scroll inside it, nothing past the window's edge.
        assert ending.evaluate("e => e.scrollHeight <= e.clientHeight + 1"
                               " && e.scrollWidth <= e.clientWidth + 1")
        box = ending.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= 720 and box["x"] + box["width"] <= 1280
        screenshot(page, "backward_ending_1280x720_present")
        view.locator("[data-act=prev]").click()  # one frame back: not freed yet
        expect(ending).to_be_hidden()
    finally:
        context.close()
