"""The browser half of the counts test: what a learner reads in the graph view agrees with the server.

The replay's status line and the details panel are drawn by the browser
(frontend/graph_view/src/replay_controls.js, tooltip.js) from the words the payload carries
(``trace.status``, ``selected_node``, ``stands_for``); here they are read on screen.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from harness.autograd import counted
from harness.graph_view import attr, open_playground, play_to_end, turn_replay_on
from stockdemo import RunConfig
from stockdemo.live.run import build

pytestmark = pytest.mark.browser


def test_the_replay_status_counts_what_the_header_counts(page, server):
    x, model = build(RunConfig())
    torch_count = counted(model(x))
    ops, params = torch_count["operations"], torch_count["parameters"]
    nodes = ops + params + 2
    view = open_playground(page, server)
    expect(page.get_by_text(f"{nodes} nodes: {ops} operations, {params} parameter tensors, the input "
                            "and the output").first).to_be_visible()
    turn_replay_on(page, view)
    view.locator("[data-act=forward]").click()
    play_to_end(view, "forward")
    status = attr(view, "status")
    assert status.startswith(f"Record (forward): {ops} of {ops} operations recorded")
    assert f"with the {params} parameter tensors, the input and the output: the graph's {nodes} nodes" \
        in status
    assert view.locator(".gv-status").inner_text() == status  # on screen, not only in the attribute
    view.locator("[data-act=backward]").click()
    play_to_end(view, "backward")
    view.locator("[data-act=prev]").click()  # one frame before the graph is freed
    status = attr(view, "status")
    assert status.startswith(f"Backward of output.sum(): {ops} of {ops} operations run")
    assert f"the {params} parameter tensors hold their .grad" in status
    assert not re.search(r"\bof \d+ nodes\b", status)


def test_the_details_panel_names_the_node_the_link_names_in_the_rolled_view(page, server):
    view = open_playground(page, server, "seq_len=200&node=L0.t0/Addmm0")
    expect(view).to_have_attribute("data-selected", "L0.t0/Addmm0")
    panel = view.locator(".gv-selected")
    expect(panel).to_be_visible()
    text = panel.inner_text()
    assert "L0.t0/Addmm0" in text and "L0.t1/Addmm0" not in text
    assert "200 nodes, one per time step, t 0…199" in text
    expect(page.get_by_text(re.compile(r"Selected node L0\.t0/Addmm0 \(Addmm, t 0, layer 0\), drawn "
                                       "rolled: its box stands for 200 nodes"))).to_be_visible()
