"""The stage in Chromium: the T control and the whole graph on one screen at every size,
live while dragging, nodes that keep their place, reduced motion, compare mode, a phone.

Positions are read through the view's documented test hook: ``el.gvScreenBox(id, pane)``
(stockdemo/ui/graph_view.py), the box a node is drawn in on the last frame.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from harness.drive import VIEW, screenshot, wait_for_run
from harness.graph_view import open_stage, t_slider
from stockdemo import RunConfig, run
from stockdemo.graph.diff import graph_diff

pytestmark = pytest.mark.browser

# (width, height, presenter mode): laptops and projectors, presenting or not, and a phone.
VIEWPORTS = [(1280, 720, False), (1280, 720, True), (1366, 768, False), (1366, 768, True),
             (1440, 900, False), (1440, 900, True), (1920, 1080, False), (1920, 1080, True),
             (390, 844, False)]
# Counts every picture the view draws, with the mouse state at that moment.
RECORDER = """el => { window.__drawn = []; window.__moving = false;
  new MutationObserver(() => {
    if (el.dataset.moving === '1') window.__moving = true;
    const g = el.dataset.drawnGraph;
    const last = window.__drawn[window.__drawn.length - 1];
    if (!last || last.graph !== g) window.__drawn.push({graph: g, nodes: el.dataset.nodes,
                                                        down: !!window.__down, t: performance.now()});
  }).observe(el, {attributes: true}); }"""

# Hold the page's animation frames (a busy machine's late frame), then let them run.
HOLD_FRAMES = """() => { const raf = window.requestAnimationFrame.bind(window); let id = 0;
  window.__held = [];
  window.requestAnimationFrame = (cb) => { window.__held.push(cb); return ++id; };
  window.__release = () => { window.requestAnimationFrame = raf;
    for (const cb of window.__held.splice(0)) raf(cb); }; }"""
RELEASE_FRAMES = "() => window.__release()"


def nodes(**settings) -> str:
    return str(len(run(RunConfig(**settings)).graph.nodes))


def on_screen(box: dict, width: int, height: int) -> bool:
    return (box["x"] >= -0.5 and box["y"] >= -0.5 and box["x"] + box["width"] <= width + 0.5
            and box["y"] + box["height"] <= height + 0.5)


@pytest.mark.parametrize("width,height,present", VIEWPORTS,
                         ids=[f"{w}x{h}{'-present' if p else ''}" for w, h, p in VIEWPORTS])
def test_the_t_control_and_the_whole_graph_are_on_screen_at_load(browser, server, width, height, present):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        view = open_stage(page, server, "present=1" if present else "")
        control, graph = t_slider(page).bounding_box(), view.bounding_box()
        assert on_screen(control, width, height), control
        assert on_screen(graph, width, height), graph  # the whole view: strip, toolbar, graph
        canvas = view.locator("canvas").bounding_box()
        assert canvas["height"] >= 0.3 * height  # and the graph has the room, not the strip
        # The run's figures too, over the graph: its node count (and, wide, its edges) on screen.
        for label in ("Graph nodes", "Graph edges") if width >= 1280 else ("Graph nodes",):
            figure = view.get_by_test_id("sdMetric").filter(has_text=label).bounding_box()
            assert on_screen(figure, width, height) and figure["y"] + figure["height"] <= canvas["y"], label
        screenshot(page, f"stage_{width}x{height}{'_present' if present else ''}")
    finally:
        context.close()


def test_a_mouse_drag_draws_the_graphs_it_crosses_and_ends_on_the_last(page, server):
    view = open_stage(page, server)
    view.evaluate(RECORDER)
    box = t_slider(page).bounding_box()

    def x_of(t: int) -> float:  # the thumb's centre for value t (a 16 px thumb, 1..200)
        return box["x"] + 8 + (t - 1) / 199 * (box["width"] - 16)

    y = box["y"] + box["height"] / 2
    page.mouse.move(x_of(5), y)
    page.mouse.down()
    page.evaluate("() => { window.__down = true; }")
    for t in range(6, 31):
        page.mouse.move(x_of(t), y)
        page.wait_for_timeout(60)  # a hand's pace: graphs drawn while the mouse is down is what is tested
    page.evaluate("() => { window.__down = false; }")
    page.mouse.up()
    final = int(t_slider(page).input_value())
    expect(view).to_have_attribute("data-nodes", nodes(seq_len=final), timeout=30_000)
    # its first frame follows at the next animation frame: read the drawings once it is drawn
    expect(view).to_have_attribute("data-drawn-graph", view.get_attribute("data-graph"))
    drawn = page.evaluate("window.__drawn")
    during = {d["graph"] for d in drawn if d["down"]}
    assert len(during) >= 3, drawn  # drawn while the mouse was still down
    assert drawn[-1]["nodes"] == nodes(seq_len=final)  # the last value is never dropped
    # the stage settles (the page's panels and link follow) once the last picture has stood a moment
    expect(page).to_have_url(re.compile(rf"seq_len={final}\b"), timeout=30_000)
    wait_for_run(page)


def test_a_node_in_both_runs_keeps_its_place_when_the_camera_keeps_its_scale(page, server):
    view = open_stage(page, server)
    before = {n: view.evaluate("(el, id) => el.gvScreenBox(id)", n)
              for n in ("L0.t0/Tanh0", "L0.t4/Addmm0", "param/rnn.weight_hh_l0")}
    scale = view.get_attribute("data-scale")
    view.evaluate(RECORDER)
    page.evaluate(HOLD_FRAMES)
    t_slider(page).focus()
    page.keyboard.press("ArrowRight")
    expect(view).to_have_attribute("data-nodes", nodes(seq_len=6), timeout=30_000)
    # The new picture came, its first frame not drawn yet: the view already says it is moving,
    # so "data-moving=0" below means the still, final frame (CI once read it before the glide).
    assert view.get_attribute("data-moving") == "1"
    page.evaluate(RELEASE_FRAMES)
    expect(view).to_have_attribute("data-moving", "0")
    assert page.evaluate("window.__moving")  # it glided: the new block grew in
    assert view.get_attribute("data-scale") == scale
    for node, box in before.items():
        after = view.evaluate("(el, id) => el.gvScreenBox(id)", node)
        assert abs(after["x"] - box["x"]) <= 2 and abs(after["y"] - box["y"]) <= 2, (node, box, after)
    new = view.evaluate("(el, id) => el.gvScreenBox(id)", "L0.t5/Tanh0")
    assert new["x"] > before["L0.t4/Addmm0"]["x"]  # the new step, to the right of the last


def test_reduced_motion_draws_the_new_graph_without_a_transition(browser, server):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, reduced_motion="reduce")
    page = context.new_page()
    try:
        view = open_stage(page, server)
        view.evaluate(RECORDER)
        t_slider(page).focus()
        page.keyboard.press("ArrowRight")
        # settled on 6 (the new picture stood still a while, the panels followed): no frame moved
        expect(page).to_have_url(re.compile(r"seq_len=6\b"), timeout=30_000)
        wait_for_run(page)
        assert not page.evaluate("window.__moving")
    finally:
        context.close()


ADDED = (0, 158, 115)  # B's colour: Okabe-Ito bluish green #009E73


def near(rgb, colour, tolerance: int = 4) -> bool:
    """Canvas pixels go through the colour pipeline: one unit off is the same colour."""
    return all(abs(a - b) <= tolerance for a, b in zip(rgb, colour, strict=False))


def ring_colour(view, node_id: str, pane: str) -> list[int]:
    """The canvas pixel just outside a node's box, where compare mode rings it."""
    return view.evaluate("""(el, [id, pane]) => {
        const b = el.gvScreenBox(id, pane), c = el.querySelector('canvas'), r = c.getBoundingClientRect();
        const d = window.devicePixelRatio || 1;
        const x = Math.round((b.x - r.left - 4.5) * d), y = Math.round((b.y - r.top + b.height / 2) * d);
        return [...c.getContext('2d').getImageData(x, y, 1, 1).data]; }""", [node_id, pane])


def test_compare_mode_rings_what_t6_added_to_t5_and_its_link_reopens_it(page, server, browser):
    view = open_stage(page, server)
    view.get_by_role("button", name="Pin as A").click()
    expect(view).to_have_attribute("data-compare", "1", timeout=30_000)
    t_slider(page).focus()
    page.keyboard.press("ArrowRight")
    diff = graph_diff(run(RunConfig()).graph, run(RunConfig(seq_len=6)).graph)
    expect(view).to_have_attribute("data-added", str(len(diff.added_nodes)), timeout=30_000)
    assert len(diff.added_nodes) == 4 and view.get_attribute("data-removed") == "0"
    assert view.get_attribute("data-added-edges") == str(len(diff.added_edges))
    expect(view.locator(".gv-pane-label").nth(1)).to_contain_text("4 nodes A lacks")
    expect(page).to_have_url(re.compile(r"seq_len=6\b"), timeout=30_000)  # the stage settled on 6
    wait_for_run(page)
    expect(view).to_have_attribute("data-moving", "0")  # pixels are read from a still picture
    for node in diff.added_nodes:  # ringed in B's colour
        assert node.id.startswith("L0.t5/")
        assert near(ring_colour(view, node.id, "b")[:3], ADDED), node.id
    assert not near(ring_colour(view, "L0.t4/Tanh0", "b")[:3], ADDED)  # in both: not ringed
    # The same step sits at the same x in both panes: one camera, synced.
    a, b = (view.evaluate("(el, [id, p]) => el.gvScreenBox(id, p)", ["L0.t2/Tanh0", p]) for p in "ab")
    assert abs(a["x"] - b["x"]) < 1 and b["y"] > a["y"]
    screenshot(page, "stage_compare_t5_t6")
    assert "compare=defaults" in page.url and "seq_len=6" in page.url
    other = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        again = other.new_page()
        again.goto(page.url)
        wait_for_run(again, ready=f"{VIEW}[data-compare='1']")
        expect(again.locator(VIEW)).to_have_attribute("data-added", "4")
    finally:
        other.close()
    view.get_by_role("button", name="Stop comparing").click()
    expect(view).to_have_attribute("data-compare", "0", timeout=30_000)


def test_a_phone_steps_t_by_exactly_one(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                  device_scale_factor=2)
    page = context.new_page()
    try:
        view = open_stage(page, server)
        plus = view.get_by_role("button", name="Sequence length T: one more")
        box = plus.bounding_box()
        assert box["width"] >= 44 and box["height"] >= 44  # a finger's target
        plus.tap()
        expect(view).to_have_attribute("data-nodes", nodes(seq_len=6), timeout=30_000)
        plus.tap()
        expect(view).to_have_attribute("data-nodes", nodes(seq_len=7), timeout=30_000)
        view.get_by_role("button", name="Sequence length T: one less").tap()
        expect(view).to_have_attribute("data-nodes", nodes(seq_len=6), timeout=30_000)
        expect(t_slider(page)).to_have_value("6")
        expect(page).to_have_url(re.compile(r"seq_len=6\b"), timeout=30_000)  # the stage settled on 6
        wait_for_run(page)
        screenshot(page, "stage_phone")
    finally:
        context.close()


FOCUSED = """() => { let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  return e ? (e.getAttribute('aria-label') || e.textContent || e.tagName).trim() : ''; }"""


def test_the_keyboard_reaches_the_graph_in_three_tab_presses_at_most(page, server):
    open_stage(page, server)
    for _ in range(3):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED) == "Skip to the graph and its controls":
            break
    else:
        raise AssertionError(f"3 x Tab ended on {page.evaluate(FOCUSED)!r}")
    skip = page.locator("a.gv-skip")
    assert skip.bounding_box()["x"] >= 0  # shown while it has the focus
    page.keyboard.press("Enter")
    assert t_slider(page).evaluate("e => e === e.getRootNode().activeElement")
    page.keyboard.press("ArrowRight")  # and T moves at once
    expect(page.locator(VIEW)).to_have_attribute("data-nodes", nodes(seq_len=6), timeout=30_000)


def test_the_tooltip_keeps_its_width_beside_the_open_details_panel(page, server):
    view = open_stage(page, server)
    tip = view.locator(".gv-tip")

    def hover_far_right() -> float:
        """Hover the node drawn nearest the canvas's right edge -> the tooltip's width."""
        far = view.evaluate("""(el) => ['param/fc.weight', 'param/fc.bias', 'output']
            .map(id => [id, el.gvScreenBox(id)]).filter(([, b]) => b).sort((a, b) => b[1].x - a[1].x)[0]""")
        box = far[1]
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(tip).to_be_visible()
        return tip.bounding_box()["width"]

    wide = hover_far_right()  # the tip opens near the right edge...
    head = view.evaluate("(el, id) => el.gvScreenBox(id)", "head/Addmm0")
    page.mouse.click(head["x"] + head["width"] / 2, head["y"] + head["height"] / 2)
    expect(view.locator(".gv-selected")).to_be_visible(timeout=30_000)  # ...then the panel narrows the box
    expect(view).to_have_attribute("data-moving", "0")
    width = hover_far_right()
    assert width >= 150 and width >= 0.9 * wide, (width, wide)  # not one character a line
    canvas = view.locator("canvas").bounding_box()
    assert tip.bounding_box()["x"] + width <= canvas["x"] + canvas["width"] + 1


def test_the_step_buttons_stop_at_the_bounds(page, server):
    open_stage(page, server, "seq_len=199")
    view = page.locator(VIEW)
    plus = view.get_by_role("button", name="Sequence length T: one more")
    minus = view.get_by_role("button", name="Sequence length T: one less")
    expect(plus).to_be_enabled()
    plus.click()
    expect(t_slider(page)).to_have_value("200")
    expect(plus).to_be_disabled()  # nothing past 200, the knob's high bound
    expect(minus).to_be_enabled()
    layers_down = view.get_by_role("button", name="Layers: one less")
    expect(layers_down).to_be_disabled()  # 1 layer, the low bound


def drop_once(page, lost, from_server: bool = False) -> list[bytes]:
    """Route the tab's websocket through here and drop the first message for which
    ``lost(message)`` holds (the page's BackMsgs, or with ``from_server`` the server's
    ForwardMsgs, parsed) -> the list the dropped message goes in."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    dropped = []
    kind = ForwardMsg if from_server else BackMsg

    def route(ws):
        server_ws = ws.connect_to_server()

        def relay(send, watched: bool):
            def on_message(message):
                if watched and isinstance(message, bytes) and not dropped:
                    msg = kind()
                    msg.ParseFromString(message)
                    if lost(msg):
                        dropped.append(message)
                        return
                send(message)
            return on_message

        ws.on_message(relay(server_ws.send, watched=not from_server))
        server_ws.on_message(relay(ws.send, watched=from_server))

    page.route_web_socket("**/_stcore/stream", route)
    return dropped


def test_a_step_whose_request_is_lost_is_sent_again_and_drawn(page, server):
    """The stage's request for T 5 -> 6 never reaches the server (dropped here on the
    websocket, as a rerun lost on a slow box): the view sends its values again after
    REQUEST_TIMEOUT_MS and the graph of T = 6 is drawn, with no second step by the learner."""
    def knobs(msg) -> bool:  # the stage's request
        states = msg.rerun_script.widget_states.widgets if msg.HasField("rerun_script") else []
        return any('"knobs"' in w.json_value for w in states)

    dropped = drop_once(page, knobs)
    view = open_stage(page, server)
    view.get_by_role("button", name="Sequence length T: one more").click()
    expect(view).to_have_attribute("data-nodes", nodes(seq_len=6), timeout=30_000)
    assert len(dropped) == 1
    expect(view).to_have_attribute("data-resent", "1")
    expect(t_slider(page)).to_have_value("6")


def test_a_stage_sent_but_never_drawn_is_asked_for_again(page, server):
    """The Playground's first run reaches the browser without its stage (its element dropped
    here on the websocket, as a following student's was on a slow box): the watch under the
    stage finds no stage, the page runs again whole, and the learner gets the stage."""
    def stage(msg) -> bool:  # the graph view's element
        element = msg.delta.new_element if msg.HasField("delta") else None
        return element is not None and element.WhichOneof("type") == "bidi_component" \
            and "graph_view" in element.bidi_component.component_name

    dropped = drop_once(page, stage, from_server=True)
    page.goto(f"{server}/playground?seq_len=5")
    wait_for_run(page)
    page.locator(".st-key-stage_settled").wait_for(state="attached", timeout=30_000)  # the panels
    screenshot(page, "stage-missing")
    assert len(dropped) == 1 and not page.locator("[data-testid='graph-view']").count()
    view = page.locator("[data-testid='graph-view']")
    expect(view).to_have_attribute("data-nodes", nodes(seq_len=5), timeout=15_000)
    expect(t_slider(page)).to_have_value("5")
    assert len(dropped) == 1


@pytest.mark.parametrize("failures", [1, 5])
def test_a_graph_view_whose_code_failed_to_load_loads_it_again(page, server, failures):
    """The graph view's code fails to load (a server restarting, a replica killed while the
    tab loads): once, the loader tries again; five times (all its tries), the stage's
    watch runs the page again and the view is drawn anew. No reload either way."""
    failed = []

    def bundle(route):
        if len(failed) < failures:
            failed.append(route.request.url)
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route("**/app/static/graph_view.js*", bundle)
    page.goto(f"{server}/playground?seq_len=5")
    view = page.locator("[data-testid='graph-view']")
    expect(view).to_have_attribute("data-nodes", nodes(seq_len=5), timeout=30_000)
    expect(t_slider(page)).to_have_value("5")
    assert len(failed) == failures
