"""The Playground keeps the promise of its first sentence, done as it says, in a real browser.

"Drag Sequence length T one step to the right and watch the graph gain one block per
layer: PyTorch recorded it while the loop ran." At 1440x900, and at 1280x720 presenting
(where the sentence is not shown, but the teacher says it): the thumb is dragged with the
mouse, one step, and without scrolling the learner sees T become 6 and a new block
grow in at the graph's end, one per layer, of exactly the nodes autograd recorded for
the new step (torch's own grad_fn graph, walked here).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from harness.autograd import counted
from harness.drive import VIEW, screenshot, wait_for_run
from stockdemo import RunConfig
from stockdemo.live.run import build

pytestmark = pytest.mark.browser

MODES = {"laptop": ({"width": 1440, "height": 900}, ""),
         "presenter": ({"width": 1280, "height": 720}, "&present=1")}


def recorded_ops(config: RunConfig) -> int:
    """How many operations autograd records for ``config``: torch's grad_fn graph, walked."""
    x, model = build(config)
    return counted(model(x))["operations"]


def inside(box: dict, area: dict) -> bool:
    return (box["x"] >= area["x"] - 1 and box["y"] >= area["y"] - 1
            and box["x"] + box["width"] <= area["x"] + area["width"] + 1
            and box["y"] + box["height"] <= area["y"] + area["height"] + 1)


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("mode", list(MODES))
def test_dragging_t_one_step_right_grows_the_graph_by_one_block_per_layer(browser, server, mode, layers):
    viewport, present = MODES[mode]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        page.goto(f"{server}/playground?num_layers={layers}{present}")
        wait_for_run(page, ready=f"{VIEW}[data-drawn-graph]")
        view = page.locator(VIEW)
        expect(view).to_have_attribute("data-moving", "0")
        if not present:
            expect(page.get_by_text("Drag Sequence length T one step to the right")).to_be_visible()
        slider = page.get_by_role("slider", name="Sequence length T")
        box = slider.bounding_box()
        assert inside(box, {"x": 0, "y": 0, **viewport})  # the control, on screen
        before = {"nodes": int(view.get_attribute("data-nodes"))}

        # Drag the thumb one step to the right, with the mouse (1..200 over the range).
        step = (box["width"] - 16) / 199
        x = box["x"] + 8 + 4 * step
        y = box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + step * 0.6, y, steps=3)
        page.mouse.move(x + step, y, steps=3)
        page.mouse.up()
        expect(slider).to_have_value("6")
        expect(view).to_have_attribute("data-nodes", str(before["nodes"] + 4 * layers), timeout=60_000)
        expect(view).to_have_attribute("data-moving", "0")

        # One block per layer, of the operations autograd recorded for the new step...
        grown = recorded_ops(RunConfig(seq_len=6, num_layers=layers)) - recorded_ops(
            RunConfig(seq_len=5, num_layers=layers))
        assert grown == 4 * layers  # nn.RNN: W_hh.T, Addmm, Add, Tanh at each step, in each layer
        expect(view.locator(".gv-change")).to_contain_text("+1 time step")
        # ...drawn where the learner is looking: inside the graph, inside the window.
        canvas = view.locator("canvas").bounding_box()
        assert inside(canvas, {"x": 0, "y": 0, **viewport})
        for layer in range(layers):
            for op in ("T0", "Addmm0", "Add0", "Tanh0"):
                node = view.evaluate("(el, id) => el.gvScreenBox(id)", f"L{layer}.t5/{op}")
                assert node is not None and inside(node, canvas), (layer, op, node, canvas)
        last = view.evaluate("(el, id) => el.gvScreenBox(id)", "L0.t4/Tanh0")
        new = view.evaluate("(el, id) => el.gvScreenBox(id)", "L0.t5/Tanh0")
        assert new["x"] > last["x"]  # the new block, after the last one: time runs right
        wait_for_run(page)
        assert "seq_len=6" in page.url
        screenshot(page, f"promise_playground_{mode}_L{layers}")
    finally:
        context.close()
