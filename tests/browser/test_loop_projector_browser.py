"""A learner's training loop on a projector: Your code at 1280x720 presenting, a cell per
time step (RNNCell, GRUCell, LSTMCell) trained with Adam, and a loop whose length the loss
decides. For the graph of predictions and every graph of the film (one per backward()):

- the graph is on screen whole, without scrolling;
- the graph view (its canvas) takes at least 45 % of the screen's height;
- the graph spans at least half of the view, across or down, whichever binds.

The graph's box is read from the view itself: every node's box as the last frame drew it
(``el.gvScreenBox(id)``). Which graph is drawn is checked against the sandbox's record of
that graph, and how many there are against torch's own count of backward() calls.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from harness.drive import SHOTS, wait_for_run
from harness.loops import training_loop, walked_by_torch
from stockdemo.code.link import code_to_link
from stockdemo.graph.ids import graph_of_record
from stockdemo.sandbox import Limits, run_code

pytestmark = pytest.mark.browser

VIEW = "[data-testid='graph-view']"
FILM = f"{VIEW} [data-knob='film']"
PROJECTOR = (1280, 720)
BUSY_TRIES = 3
VIEW_SHARE = 0.45  # of the screen's height, at least
SPAN = 0.5  # of the view, at least, across or down
PROGRAMS = {
    "RNNCell": training_loop("RNNCell"),
    "GRUCell, Adam": training_loop("GRUCell"),
    "LSTMCell": training_loop("LSTMCell"),
    "GRUCell, while the loss is high": training_loop("GRUCell", "while"),
}

# Where the view and the graph are, in the window's pixels: the canvas, the union of every
# drawn node's box, and how far the page is scrolled.
MEASURE_JS = """
(el) => {
  const c = el.querySelector('canvas').getBoundingClientRect();
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const id of Object.keys(el.gvCentres())) {
    const b = el.gvScreenBox(id);
    x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width); y1 = Math.max(y1, b.y + b.height);
  }
  return {view: {x: c.x, y: c.y, w: c.width, h: c.height}, graph: {x: x0, y: y0, w: x1 - x0, h: y1 - y0},
          scrolled: document.querySelector("[data-testid='stMain']").scrollTop,
          ids: Object.keys(el.gvCentres())};
}
"""


def open_program(browser, server: str, source: str, size: tuple[int, int], present: bool):
    """The page opened on a link to ``source``, its graph drawn. A run the sandbox stopped on
    its wall clock while other tests held the box's two cores is kept for that text, as any
    run is: the learner's way out, a changed text (a comment at its end), runs it afresh."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    for attempt in range(BUSY_TRIES):
        text = source + "# once more: the box was busy\n" * attempt
        page.goto(f"{server}/code?code={code_to_link(text)}{'&present=1' if present else ''}")
        wait_for_run(page, ready=f"{VIEW}[data-drawn-graph], [data-testid='stAlert']")
        stopped = page.locator("[data-testid='stAlert']").filter(has_text="wall-clock")
        if not stopped.count():
            break
        print(f"\nattempt {attempt + 1}: {stopped.first.inner_text()}")
    drawn(page)
    return page


def drawn(page) -> None:
    """Wait until the view has drawn the picture of the last request it sent, and holds still."""
    view = page.locator(VIEW).element_handle()
    page.wait_for_function("el => Number(el.dataset.req || 0) >= Number(el.dataset.sent || 0)"
                           " && el.dataset.drawnGraph === el.dataset.graph && el.dataset.moving === '0'",
                           arg=view, timeout=60_000)


def step_back(page, to: int) -> None:
    """One press of the stepper's − button: the film's previous graph, drawn."""
    page.locator(f"{FILM} [data-step='-1']").click()
    expect(page.locator(f"{FILM} input[type='range']")).to_have_value(str(to), timeout=60_000)
    wait_for_run(page, ready=None)
    drawn(page)


def check_on_screen(page, size: tuple[int, int], what: str) -> dict:
    """The three promises, read from the view -> its measures."""
    m = page.locator(VIEW).evaluate(MEASURE_JS)
    view, graph = m["view"], m["graph"]
    assert m["scrolled"] == 0, f"{what}: the page was scrolled"
    assert view["h"] >= VIEW_SHARE * size[1], f"{what}: the view is {view['h']:.0f} px of {size[1]}"
    for a, b, side in ((graph["x"], view["x"], "left"), (graph["y"], view["y"], "top")):
        assert a >= b - 0.5, f"{what}: the graph is cut at the view's {side}"
    assert graph["x"] + graph["w"] <= min(view["x"] + view["w"], size[0]) + 0.5, f"{what}: cut at the right"
    assert graph["y"] + graph["h"] <= min(view["y"] + view["h"], size[1]) + 0.5, f"{what}: cut at the bottom"
    span = max(graph["w"] / view["w"], graph["h"] / view["h"])
    assert span >= SPAN, f"{what}: the graph spans {span:.0%} of the view"
    return m


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_on_a_projector_every_graph_of_a_training_loop_is_whole_on_screen_and_fills_half_the_view(
        browser, server, name):
    source = PROGRAMS[name]
    film = run_code(source, Limits(wall_s=60.0)).film  # the test's own record of each graph
    assert len(film) == len(walked_by_torch(source)) >= 2  # a graph per backward(), then predictions
    page = open_program(browser, server, source, PROJECTOR, present=True)
    try:
        for i in reversed(range(len(film))):  # the graph of predictions first, as the page opens
            if i < len(film) - 1:
                step_back(page, i)
            what = f"{name}, graph {i + 1} of {len(film)}"
            m = check_on_screen(page, PROJECTOR, what)
            assert sorted(m["ids"]) == sorted(n.id for n in graph_of_record(film[i]).nodes), what
            assert page.locator(f"{FILM} input[type='range']").get_attribute("max") == str(len(film) - 1)
            print(f"\n{what}: view {m['view']['h']:.0f} px high, graph {m['graph']['w']:.0f}x"
                  f"{m['graph']['h']:.0f} in {m['view']['w']:.0f}x{m['view']['h']:.0f}")
            if name == "GRUCell, Adam" and i in (0, len(film) - 1):
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"code-training-loop-{i + 1}-1280x720-present.png"))
    finally:
        page.context.close()


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)], ids=["1440x900", "phone"])
def test_a_gru_training_loops_graphs_stay_whole_in_their_view_on_a_laptop_and_a_phone(browser, server, size):
    source = PROGRAMS["GRUCell, Adam"]
    page = open_program(browser, server, source, size, present=False)
    try:
        last = int(page.locator(f"{FILM} input[type='range']").get_attribute("max"))
        for i in (last, last - 1):
            if i < last:
                step_back(page, i)
            page.locator(VIEW).scroll_into_view_if_needed()  # a phone's view is below the code
            m = page.locator(VIEW).evaluate(MEASURE_JS)
            view, graph = m["view"], m["graph"]
            assert view["y"] >= -0.5 and view["y"] + view["h"] <= size[1] + 0.5, view
            assert graph["x"] >= view["x"] - 0.5 and graph["x"] + graph["w"] <= view["x"] + view["w"] + 0.5
            assert graph["y"] >= view["y"] - 0.5 and graph["y"] + graph["h"] <= view["y"] + view["h"] + 0.5
            assert max(graph["w"] / view["w"], graph["h"] / view["h"]) >= SPAN
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"code-training-loop-{size[0]}x{size[1]}.png"))
    finally:
        page.context.close()
