"""A handed-out graph (``python -m stockdemo graph --format html``) opened from disk in Chromium,
with every network request refused: pan, zoom, hover, click, the table, both replays.
And the same file downloaded from the app's graph view.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from harness.axe import TAGS, axe_source
from harness.drive import SHOTS, VIEW, wait_for_run
from harness.graph_view import attr, open_handout, second_backward_error, until
from stockdemo import RunConfig, run
from stockdemo.__main__ import main as cli
from stockdemo.layout.steps import layout

pytestmark = pytest.mark.browser


def test_the_handout_works_from_disk_with_the_network_refused(offline, tmp_path):
    path = tmp_path / "run.html"
    assert cli(["graph", "--format", "html", "-o", str(path)]) == 0
    config = RunConfig()
    graph = run(config).graph
    picture = layout(graph, "auto", max_nodes=None)
    view = open_handout(offline, path)
    expect(view).to_have_attribute("data-nodes", str(len(picture.nodes)))

    # Zoom with the wheel, pan by dragging.
    fitted = float(attr(view, "scale"))
    box = view.locator("canvas").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    offline.mouse.move(cx, cy)
    offline.mouse.wheel(0, -400)
    zoomed = until(view, "scale", lambda k: k > fitted * 1.2)
    tx = float(attr(view, "tx"))
    offline.mouse.down()
    offline.mouse.move(cx + 150, cy, steps=5)
    offline.mouse.up()
    until(view, "tx", lambda x: x > tx + 100)
    assert float(attr(view, "scale")) == pytest.approx(zoomed)

    # Hover a node: its tip; click it: selected, with its details beside the graph.
    view.locator("[data-act=fit]").click()
    expect(view).to_have_attribute("data-scale", f"{fitted:.4f}")
    tanh = next(n for n in graph.op_nodes if n.step == 2 and n.label == "Tanh")
    node = next(p for p in picture.nodes if p.id == tanh.id)
    box = view.locator("canvas").bounding_box()
    k, tx, ty = (float(attr(view, n)) for n in ("scale", "tx", "ty"))
    x, y = box["x"] + node.x * k + tx, box["y"] + node.y * k + ty
    offline.mouse.move(x, y)
    expect(view).to_have_attribute("data-hover", tanh.id)
    tip = view.locator(".gv-tip")
    expect(tip).to_be_visible()
    assert tanh.op in tip.inner_text() and "stockdemo/model.py" in tip.inner_text()
    offline.mouse.click(x, y)
    expect(view).to_have_attribute("data-selected", tanh.id)
    expect(view.locator(".gv-selected")).to_contain_text(tanh.op)

    # The table: one row per drawn node, the node's op in it.
    offline.get_by_text("The graph as a table").click()
    table = offline.get_by_test_id("handout-table")
    expect(table).to_be_visible()
    assert table.locator("tbody tr").count() == len(picture.nodes)
    row = table.locator("tr", has_text=tanh.id)
    expect(row).to_contain_text("Tanh")

    # Record, then Backward, played to their ends: the same frames as the app's view.
    view.locator("[data-act=forward]").click()
    view.locator("[data-act=next]").click()
    view.locator("[data-act=next]").click()
    expect(view).to_have_attribute("data-frame", "2")
    view.locator(".gv-speed").select_option("500")
    view.locator("[data-act=play]").click()
    expect(view).to_have_attribute("data-playing", "0", timeout=30_000)
    assert attr(view, "mode") == "forward"
    assert attr(view, "frames") == attr(view, "frame") == str(len(graph.op_nodes))
    view.locator("[data-act=backward]").click()  # starts playing, at the speed chosen
    expect(view).to_have_attribute("data-playing", "0", timeout=30_000)
    assert attr(view, "mode") == "backward" and attr(view, "frame") == attr(view, "frames") != "0"
    expect(view.locator(".gv-ending")).to_contain_text(second_backward_error())

    assert offline.requested == [], "the handout asked the network for something"
    assert offline.console_errors == []


BOXES = "[data-testid=graph-poster] rect.pb, [data-testid=graph-poster] rect.pm"
RECTS = ("els => els.map((e) => { const r = e.getBoundingClientRect(); "
         "return [r.x, r.y, r.width, r.height]; })")


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720), (390, 844)],
                         ids=["1440x900", "1280x720", "phone"])
def test_the_poster_shows_the_picture_without_script_and_the_view_draws_on_it(browser, tmp_path, size):
    """Scripts off (a mail preview, a locked-down viewer, a printer): the file still shows the
    whole picture. Scripts on: the view takes its place, each box where the poster had it."""
    path = tmp_path / "run.html"
    assert cli(["graph", "--format", "html", "-o", str(path)]) == 0
    picture = layout(run(RunConfig()).graph, "auto", max_nodes=None)
    viewport = {"width": size[0], "height": size[1]}
    still = browser.new_context(viewport=viewport, java_script_enabled=False, offline=True)
    try:
        page = still.new_page()
        page.goto(path.as_uri())
        poster = page.get_by_test_id("graph-poster")
        expect(poster).to_be_visible()
        drawn = page.locator(BOXES).evaluate_all(RECTS)
        assert len(drawn) == len(picture.nodes)
        assert all(w > 10 and h > 10 for _, _, w, h in drawn) or size[0] < 500  # a phone: small
        assert page.locator("[data-testid=graph-poster] text").count() == len(picture.nodes) + sum(
            bool(f.label) for f in picture.frames)
        page.screenshot(path=str(SHOTS / f"handout_poster_{size[0]}.png"))
    finally:
        still.close()
    live = browser.new_context(viewport=viewport, offline=True)
    try:
        page = live.new_page()
        view = open_handout(page, path)
        expect(page.get_by_test_id("graph-poster")).to_have_count(0)
        ids = [p.id for p in picture.nodes]
        boxes = view.evaluate("(el, ids) => ids.map((id) => el.gvScreenBox(id))", ids)
        for (x, y, w, h), box in zip(drawn, boxes, strict=True):
            assert box["x"] == pytest.approx(x, abs=1.5) and box["y"] == pytest.approx(y, abs=1.5)
            assert box["width"] == pytest.approx(w, abs=1.5) and box["height"] == pytest.approx(h, abs=1.5)
    finally:
        live.close()


def test_screenshot_of_a_gru_handout_mid_replay(offline, tmp_path):
    """The picture docs/hosting.md shows: a GRU run of 2 layers, Record stopped halfway."""
    path = tmp_path / "gru.html"
    assert cli(["graph", "--cell", "gru", "--seq-len", "6", "--num-layers", "2",
                "--format", "html", "-o", str(path)]) == 0
    view = open_handout(offline, path)
    view.locator(".gv-speed").select_option("100")
    view.locator("[data-act=forward]").click()  # plays
    frames = int(attr(view, "frames"))
    until(view, "frame", lambda f: f >= frames * 0.55)
    view.locator("[data-act=play]").click()  # pause
    expect(view).to_have_attribute("data-playing", "0")
    assert 0 < int(attr(view, "frame")) < frames
    expect(view.locator(".gv-code li.gv-now")).to_have_count(1)
    assert offline.requested == [] and offline.console_errors == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    offline.screenshot(path=str(SHOTS / "handout_mid_replay.png"))


def test_the_app_downloads_the_same_handout(page, server, tmp_path):
    """The Playground's graph view, table open: the download is the run's handout, built on the click."""
    page.goto(f"{server}/playground?seq_len=7")
    wait_for_run(page)
    page.get_by_text("The graph as a table").first.click()
    wait_for_run(page)
    button = page.get_by_role("button", name=re.compile("Download this graph as one HTML file"))
    with page.expect_download(timeout=60_000) as download:
        button.click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "stockdemo-graph-rnn-T7-L1.html"
    text = saved.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and '"trace":{' in text
    picture = layout(run(RunConfig(seq_len=7)).graph, "auto", max_nodes=None)
    offline = page.context.browser.new_context(offline=True).new_page()
    try:
        offline.goto(saved.as_uri())
        view = offline.locator(VIEW)
        expect(view).to_have_attribute("data-nodes", str(len(picture.nodes)), timeout=30_000)
        expect(view.locator("[data-act=backward]")).to_be_visible()
    finally:
        offline.context.close()


def test_the_largest_handout_opens_from_disk(offline, tmp_path):
    """GRU, T = 200, 4 layers, unrolled: 11,248 boxes in one file of about 3.5 MB."""
    path = tmp_path / "gru200.html"
    assert cli(["graph", "--cell", "gru", "--seq-len", "200", "--num-layers", "4", "--view", "unrolled",
                "--format", "html", "-o", str(path)]) == 0
    config = RunConfig(cell="gru", seq_len=200, num_layers=4)
    boxes = len(layout(run(config).graph, "unrolled", max_nodes=None).nodes)
    view = open_handout(offline, path)
    expect(view).to_have_attribute("data-nodes", str(boxes))
    drawn_ms = float(attr(view, "drawn-at"))
    print(f"handout GRU T200 L4 unrolled: {path.stat().st_size / 1e6:.2f} MB, "
          f"first drawn {drawn_ms:.0f} ms after the file began to load")
    view.locator("[data-act=backward]").click()
    expect(view).to_have_attribute("data-mode", "backward")
    assert offline.requested == [] and offline.console_errors == []


def test_the_handout_and_its_poster_pass_axe(offline, tmp_path):
    """axe-core (WCAG 2.0/2.1 A and AA): no serious or critical violation in the handout with
    its view, nor in its poster as a page without the view's script shows it."""

    path = tmp_path / "run.html"
    assert cli(["graph", "--format", "html", "-o", str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    still = tmp_path / "poster.html"  # the view's script (the file's last) left out
    still.write_text(text[:text.rindex("<script>")] + "</body>\n</html>\n", encoding="utf-8")
    found = {}
    for name, file in (("handout", path), ("poster", still)):
        offline.goto(file.as_uri())
        if name == "handout":
            expect(offline.locator(VIEW)).to_have_attribute("data-drawn-graph", re.compile(r"\w+"))
        else:
            expect(offline.get_by_test_id("graph-poster")).to_be_visible()
        offline.add_script_tag(content=axe_source())
        violations = offline.evaluate(
            "async (tags) => (await axe.run(document, {runOnly: {type: 'tag', values: tags}}))"
            ".violations.filter(v => ['serious', 'critical'].includes(v.impact))"
            ".map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).slice(0, 3).join(', '))", TAGS)
        found[name] = violations
    assert found == {"handout": [], "poster": []}
