"""The graph view in a real browser: where it is on a page, its data-* attributes (the view's test
hooks, frontend/graph_view/src/frame.js), opening it on the Playground or from a handout file,
and its replay."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from harness.drive import VIEW, wait_for_run
from harness.helpers import wait_until
from stockdemo import RunConfig, run


def open_playground(page: Page, server: str, query: str = "") -> Locator:
    page.goto(f"{server}/playground{'?' + query if query else ''}")
    wait_for_run(page)
    view = page.locator(VIEW)
    expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=30_000)
    view.scroll_into_view_if_needed()
    return view


def attr(view, name: str) -> str:
    return view.get_attribute(f"data-{name}") or ""


def until(view, name: str, holds, timeout: float = 10.0) -> float:
    """Wait until ``holds(float(data-<name>))``: the view updates on its next animation frame."""
    seen: list[float] = []

    def read_holds() -> bool:
        seen.append(float(attr(view, name) or "nan"))
        return holds(seen[-1])

    try:
        wait_until(read_holds, timeout, f"data-{name}", interval=0.02)
    except AssertionError:
        raise AssertionError(f"data-{name} is {seen[-1]}") from None
    return seen[-1]


def turn_replay_on(page, view) -> None:
    page.get_by_text("Replay this run").click()
    wait_for_run(page)
    expect(view.locator("[data-act=forward]")).to_be_visible(timeout=30_000)


def play_to_end(view, mode: str) -> None:
    view.locator(".gv-speed").select_option("500")
    expect(view).to_have_attribute("data-mode", mode)
    expect(view).to_have_attribute("data-playing", "0", timeout=30_000)
    assert attr(view, "frame") == attr(view, "frames") != "0"


def second_backward_error() -> str:
    """The error torch itself raises on a second backward() of a run's output."""
    result = run(RunConfig())
    out = result.model(result.inputs).sum()
    out.backward()
    with pytest.raises(RuntimeError) as err:
        out.backward()
    return str(err.value).split("\n")[0]


def open_stage(page: Page, server: str, query: str = "") -> Locator:
    page.goto(f"{server}/playground{'?' + query if query else ''}")
    wait_for_run(page, ready=f"{VIEW}[data-drawn-graph]")
    view = page.locator(VIEW)
    expect(view).to_have_attribute("data-moving", "0")
    return view


def t_slider(page: Page) -> Locator:
    return page.get_by_role("slider", name="Sequence length T")


def open_handout(page: Page, path: Path) -> Locator:
    page.goto(path.as_uri())
    view = page.locator(VIEW)
    expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=30_000)
    return view
