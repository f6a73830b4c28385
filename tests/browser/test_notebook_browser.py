"""stockdemo.show in JupyterLab (from PyPI, on loopback) opened in Chromium: the cell draws the
graph, a hover names the cell's line, a click is ``widget.selected`` in the kernel (read back
by the next cell), both replays play, ``widget.update`` glides; in marimo (``mo.ui.anywidget``)
the same graph draws and a click reaches the cell that reads it; and ``widget.save``'s file
opens offline and draws.

One JupyterLab server and one notebook page serve the JupyterLab tests, in file order: the
first runs the cell that shows the graph, the last changes it.
"""

from __future__ import annotations

import linecache
import re

import pytest
import torch
from playwright.sync_api import expect

from harness.drive import SHOTS
from harness.graph_view import attr, open_handout, play_to_end, until
from harness.notebooks import VIEW, jupyterlab, marimo_app, open_notebook, run_cell, write_notebook

pytestmark = pytest.mark.browser

CELL = """\
import torch
from torch import nn
import stockdemo

class Loop(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 6)
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], 6)
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
        return self.fc(h)

torch.manual_seed(0)
model, x = Loop(), torch.randn(4, 5, 3)
widget = stockdemo.show(model, x)
widget"""
STEP_LINE = "h = self.cell(x[:, t], h)"
READ_BACK = 'print("selected:", widget.selected)'
UPDATE = "widget.update(model, torch.randn(4, 6, 3))"
LONG = "long = stockdemo.show(model, torch.randn(4, 80, 3))\nlong"  # past the budget: rolled
READ_UNROLL = 'print("unroll:", long.unroll)'


def cell_in_process() -> object:
    """The notebook's cell run here, its source where linecache finds it as IPython registers a
    cell's: the same code, so the same graph and node ids as in the kernel -> its widget."""
    name = "<the notebook's first cell>"
    linecache.cache[name] = (len(CELL), None, CELL.splitlines(keepends=True), name)
    scope: dict = {}
    exec(compile(CELL, name, "exec"), scope)
    return scope["widget"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    write_notebook(folder / "graph.ipynb", [CELL, READ_BACK, UPDATE, LONG, READ_UNROLL])
    with jupyterlab(folder) as url:
        yield url


@pytest.fixture(scope="module")
def notebook(lab, browser):
    """The notebook open in JupyterLab, its first cell run: -> (page, the graph view)."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.console_errors = []
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    open_notebook(page, lab, "graph.ipynb")
    run_cell(page, 0)
    view = page.locator(VIEW)
    expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=60_000)
    yield page, view
    context.close()


def center_of(view, node_id: str) -> tuple[float, float]:
    box = view.evaluate("(v, id) => v.gvScreenBox(id)", node_id)
    assert box is not None, f"{node_id} is not drawn"
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def tanh_at(widget, step: int) -> str:
    return next(n.id for n in widget.run.graph.nodes if n.op == "TanhBackward0" and n.step == step)


def test_the_cell_draws_the_graph_on_a_canvas(notebook):
    page, view = notebook
    widget = cell_in_process()
    expect(view).to_have_attribute("data-nodes", str(len(widget.run.picture.nodes)))
    painted = view.locator("canvas").evaluate(
        """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                  let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i + 3] && d[i] < 200) n++;
                  return n; }""")
    assert painted > 1000  # dark pixels: boxes, labels and edges, not an empty canvas
    assert float(attr(view, "draw-ms")) >= 0
    assert page.console_errors == []


def test_hovering_a_node_shows_the_line_of_the_cell_that_made_it(notebook):
    page, view = notebook
    node = tanh_at(cell_in_process(), 2)
    page.mouse.move(*center_of(view, node))
    expect(view).to_have_attribute("data-hover", node)
    tip = view.locator(".gv-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text(re.compile(r"Cell In\[1\]:14 \(forward\)"))
    expect(tip).to_contain_text(STEP_LINE)
    page.locator(".jp-NotebookPanel").screenshot(path=str(SHOTS / "notebook.png"))


def test_a_click_is_widget_selected_in_the_kernel_read_back_by_the_next_cell(notebook):
    page, view = notebook
    node = tanh_at(cell_in_process(), 3)
    page.mouse.click(*center_of(view, node))
    expect(view).to_have_attribute("data-selected", node)
    assert run_cell(page, 1).strip() == f"selected: {node}"


def test_record_and_backward_replay_the_run(notebook):
    _, view = notebook
    view.locator("[data-act=forward]").click()
    expect(view).to_have_attribute("data-mode", "forward")
    until(view, "frame", lambda f: f > 0, timeout=20)  # it plays: the playhead moves on its own
    play_to_end(view, "forward")  # the rest at the view's fastest speed, to its last frame
    assert "Record (forward)" in attr(view, "status")
    view.locator("[data-act=backward]").click()
    play_to_end(view, "backward")
    expect(view).to_have_attribute("data-ending", "1")
    expect(view.locator(".gv-ending-text")).to_contain_text("backward through the graph a second time")


def test_update_redraws_with_a_transition_and_the_nodes_that_stay_keep_their_ids(notebook):
    page, view = notebook
    before = attr(view, "graph")
    kept = tanh_at(cell_in_process(), 0)
    run_cell(page, 2)
    expect(view).not_to_have_attribute("data-graph", before, timeout=60_000)
    expect(view).to_have_attribute("data-motion-ms", re.compile(r"\d+"), timeout=10_000)
    assert center_of(view, kept)  # the step-0 node is still drawn, under its id
    torch.manual_seed(0)
    assert int(attr(view, "nodes")) > len(cell_in_process().run.picture.nodes)


def test_a_click_on_a_rolled_run_is_widget_unroll_and_draws_every_step(notebook):
    page, _ = notebook
    run_cell(page, 3)
    view = page.locator(VIEW).nth(1)
    expect(view).to_have_attribute("data-folds", "1", timeout=60_000)
    rolled = int(attr(view, "nodes"))
    fold = view.evaluate("v => v.gvFolds()")[0]
    page.mouse.click(*center_of(view, fold))
    expect(view).to_have_attribute("data-folds", "0", timeout=60_000)
    assert int(attr(view, "nodes")) > rolled
    assert run_cell(page, 4).strip() == f"unroll: ['{fold}']"


MARIMO_APP = """\
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo
    return (mo,)


@app.cell
def _(mo):
{cell}
    shown = mo.ui.anywidget(widget)
    shown
    return (shown,)


@app.cell
def _(mo, shown):
    mo.md(f"selected: {{shown.value.get('selected')}}")
    return
"""


def test_in_marimo_the_graph_draws_and_a_click_reaches_the_cell_that_reads_it(browser, tmp_path):
    cell = "\n".join("    " + line if line else "" for line in CELL.splitlines()[:-1])
    app = tmp_path / "graph_app.py"
    app.write_text(MARIMO_APP.format(cell=cell))
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    with marimo_app(app) as url:
        page.goto(url)
        view = page.locator(".gv")  # in the widget's shadow root: Playwright's locators pierce it
        expect(view).to_have_attribute("data-drawn-graph", re.compile(r"\w+"), timeout=120_000)
        node = tanh_at(cell_in_process(), 2)
        page.mouse.move(*center_of(view, node))
        made_by = re.compile(rf"graph_app\.py:\d+ \(forward\)\s+{re.escape(STEP_LINE)}")
        expect(view.locator(".gv-tip")).to_contain_text(made_by)
        page.mouse.click(*center_of(view, node))
        expect(page.get_by_text(f"selected: {node}")).to_be_visible(timeout=30_000)
    context.close()


def test_a_saved_graph_opens_offline_and_draws(offline, tmp_path):  # noqa: F811 (the fixture)
    widget = cell_in_process()
    path = widget.save(tmp_path / "graph.html")
    view = open_handout(offline, path)
    expect(view).to_have_attribute("data-nodes", str(len(widget.run.picture.nodes)))
    node = tanh_at(widget, 1)
    offline.mouse.move(*center_of(view, node))
    expect(view.locator(".gv-tip")).to_contain_text(STEP_LINE)
    assert offline.requested == [] and offline.console_errors == []
