"""The camera after a new run, on a projector (1280x720, presenter mode): the nodes that stay
glide first, then the camera eases to frame the new graph when it fills too little of the view
or spills out of it; a camera the learner moved stays theirs; a T step keeps the camera.

The graph's extent is read from the canvas's pixels (what differs from its background), not
from the view's own sums; node centres and cameras frame by frame through the view's test hook
``el.gvCentres()`` and its ``data-scale``, ``data-tx``, ``data-ty`` and ``data-phase``
("glide", then "camera"). All tests share the session's server and browser; none sleeps.
"""

from __future__ import annotations

import math

import pytest
from playwright.sync_api import expect

from harness.drive import SHOTS, VIEW, wait_for_run
from harness.editor import open_code, shows_graph_of, wait_for_text
from stockdemo import RunConfig, run
from stockdemo.code.edits import EDITS, apply
from stockdemo.sandbox import SEED_CODE

pytestmark = pytest.mark.browser

PROJECTOR = (1280, 720)
FILL = 0.75  # of the view's width or height, after the transition (camera.js's FILL)
SLACK = 1.0  # px: positions are read rounded, cameras to 0.01 px
KEY_PAN_PX = 80  # an arrow key's pan (input.js)

# Every frame the view draws from now on: its camera, phase and node centres (canvas px).
RECORD = """el => { window.__frames = []; if (window.__frameWatch) window.__frameWatch.disconnect();
  let last = el.dataset.draws;
  window.__frameWatch = new MutationObserver(() => {
    if (el.dataset.draws === last) return;
    last = el.dataset.draws;
    window.__frames.push({phase: el.dataset.phase || '', moving: el.dataset.moving,
      cam: [+el.dataset.scale, +el.dataset.tx, +el.dataset.ty], at: el.gvCentres()});
  });
  window.__frameWatch.observe(el, {attributes: true}); }"""
# The bounding box of what the canvas draws that differs from its background, in css px.
EXTENT = """el => { const c = el.querySelector('canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const W = c.width, H = c.height, r = window.devicePixelRatio || 1;
  let x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    const i = (y * W + x) * 4;
    if (Math.abs(d[i] - d[0]) + Math.abs(d[i + 1] - d[1]) + Math.abs(d[i + 2] - d[2]) > 24) {
      if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y; } }
  return {width: (x1 - x0 + 1) / W, height: (y1 - y0 + 1) / H, x0: x0 / r, y0: y0 / r, x1: (x1 + 1) / r,
          y1: (y1 + 1) / r, W: W / r, H: H / r}; }"""


def camera(view) -> list[float]:
    return [float(view.get_attribute(a)) for a in ("data-scale", "data-tx", "data-ty")]


def same(a: list[float], b: list[float]) -> bool:
    """Two cameras alike to what the attributes show (scale to 4 places, px to 2)."""
    return abs(a[0] - b[0]) <= 2e-4 and abs(a[1] - b[1]) <= 0.05 and abs(a[2] - b[2]) <= 0.05


def press(page, name: str) -> dict:
    """Press a ready-made edit's pill and wait for the transition to end -> what it showed:
    the camera and node centres before, every frame drawn, the camera after and the extent."""
    view = page.locator(VIEW)
    before = {"cam": camera(view), "at": view.evaluate("el => el.gvCentres()")}
    view.evaluate(RECORD)
    title, source = ("the seed", SEED_CODE) if name == "seed" else (EDITS[name].title, apply(EDITS[name]))
    page.get_by_role("radio", name=title, exact=True).click()  # a pill
    wait_for_text(page, source)
    shows_graph_of(page, source)  # autograd's own node count, the transition over
    expect(view).to_have_attribute("data-moving", "0")
    frames = page.evaluate("window.__frames")
    return {"name": name, "before": before, "frames": frames, "cam": camera(view),
            "at": view.evaluate("el => el.gvCentres()"), "extent": view.evaluate(EXTENT)}


def between(a: float, b: float, m: float) -> bool:
    return min(a, b) - SLACK <= m <= max(a, b) + SLACK


def check_transition(shot: dict) -> bool:
    """The nodes that stay glide first, the camera still; then the camera alone eases to where it
    ends. -> whether a node was seen strictly between its old place and its new one."""
    start = shot["before"]
    first_glide = next((j for j, f in enumerate(shot["frames"]) if f["phase"] == "glide"), 0)
    if first_glide:  # drawn again before the glide (a resize on a busy machine): it starts from there
        start = shot["frames"][first_glide - 1]
    (k0, x0, y0), (k1, x1, y1) = start["cam"], shot["cam"]
    old, new = start["at"], shot["at"]
    kept = [i for i in new if i in old]
    # Where each node that stays ends its glide: its new place in the picture, seen by the old camera.
    end = {i: (x0 + (new[i][0] - x1) / k1 * k0, y0 + (new[i][1] - y1) / k1 * k0) for i in kept}
    moving = [f["phase"] for f in shot["frames"] if f["moving"] == "1"]
    if "glide" in moving and "camera" in moving:  # the camera moves after the glide, never before
        last_glide = max(j for j, p in enumerate(moving) if p == "glide")
        assert last_glide < moving.index("camera"), (shot["name"], moving)
    glides = [f for f in shot["frames"] if f["phase"] == "glide"]
    seen = False
    for f in glides:
        assert same(f["cam"], [k0, x0, y0]), (shot["name"], f["cam"], (k0, x0, y0))  # the camera holds still
        for i in kept:
            (ox, oy), (ex, ey), (mx, my) = old[i], end[i], f["at"][i]
            assert between(ox, ex, mx) and between(oy, ey, my), (shot["name"], i, old[i], end[i], f["at"][i])
            far = max(abs(ex - ox), abs(ey - oy))
            seen |= far > 4 and min(abs(mx - ox) + abs(my - oy), abs(mx - ex) + abs(my - ey)) > 1
    if not same([k0, x0, y0], [k1, x1, y1]):  # the camera eased, in one move, from the old camera to the new
        ks = [f["cam"][0] for f in shot["frames"] if f["phase"] == "camera"]
        assert ks, (shot["name"], moving)
        assert all(between(k0, k1, k) for k in ks), (shot["name"], k0, k1, ks)
        assert ks == sorted(ks, reverse=k1 < k0), (shot["name"], ks)
    return seen


def fills(shot: dict) -> None:
    e = shot["extent"]
    assert e["width"] >= FILL or e["height"] >= FILL, (shot["name"], e)
    assert e["x0"] >= 0 and e["y0"] >= 0 and e["x1"] <= e["W"] and e["y1"] <= e["H"]


def test_after_each_ready_made_edit_the_nodes_glide_then_the_camera_frames_the_graph_on_a_projector(
        browser, server):
    page = open_code(browser, server, "?present=1", size=PROJECTOR)
    try:
        edits = [name for name in EDITS if name != "seed"]
        shots = []
        for name in edits:  # each edit opened on the seed...
            shots.append(press(page, name))
            shots.append(press(page, "seed"))
        for name in edits:  # ...and each pressed after the one before
            shots.append(press(page, name))
        glided = [check_transition(s) for s in shots]
        for shot in shots:
            fills(shot)
        print("\n" + "\n".join(f"{s['name']:>10}: {100 * s['extent']['width']:.0f} % x "
                               f"{100 * s['extent']['height']:.0f} % of the view, scale "
                               f"{s['before']['cam'][0]:.3f} -> {s['cam'][0]:.3f}" for s in shots))
        assert sum(glided) >= len(edits)  # nodes were seen on their way, not only at the ends
        moved = [s for s in shots if not same(s["cam"], s["before"]["cam"])]
        assert moved and len(moved) < len(shots)  # the camera eased where needed, and only there
        for name in ("detach", "print"):
            press(page, name)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"code-{name}-1280x720-present.png"))
        # A camera the learner moved is theirs: the next edit keeps it, Fit fits again.
        view = page.locator(VIEW)
        fitted = view.get_attribute("data-scale")
        view.locator("canvas").focus()
        page.keyboard.press("+")
        expect(view).not_to_have_attribute("data-scale", fitted)
        mine = camera(view)
        shot = press(page, "skip")
        assert same(shot["cam"], mine), (shot["cam"], mine)
        view.get_by_role("button", name="Fit the whole graph").click()
        expect(view).not_to_have_attribute("data-scale", f"{mine[0]:.4f}")
        assert camera(view)[0] < mine[0]
        # ...and once the learner has panned the graph out of the view, the next run fits it.
        width = view.locator("canvas").bounding_box()["width"]
        view.locator("canvas").focus()
        left = min(x for x, _ in view.evaluate("el => el.gvCentres()").values())
        for _ in range(math.ceil((width - left) / KEY_PAN_PX) + 1):
            page.keyboard.press("ArrowLeft")  # the graph moves right
        page.wait_for_function("([el, w]) => Object.values(el.gvCentres()).every(([x]) => x > w)",
                               arg=[view.element_handle(), width])
        shot = press(page, "detach")
        fitted = next(s["cam"] for s in shots if s["name"] == "detach")
        assert same(shot["cam"], fitted), (shot["cam"], fitted)
        fills(shot)
    finally:
        page.context.close()


def test_a_t_step_on_the_projector_keeps_the_camera_while_the_graph_fits(browser, server):
    context = browser.new_context(viewport={"width": PROJECTOR[0], "height": PROJECTOR[1]})
    page = context.new_page()
    try:
        page.goto(f"{server}/playground?present=1")
        wait_for_run(page, ready=f"{VIEW}[data-drawn-graph]")
        view = page.locator(VIEW)
        expect(view).to_have_attribute("data-moving", "0")
        cam, box = camera(view), view.evaluate("el => el.gvScreenBox('L0.t0/Tanh0')")
        view.get_by_role("button", name="Sequence length T: one more").click()
        expect(view).to_have_attribute("data-nodes", str(len(run(RunConfig(seq_len=6)).graph.nodes)),
                                       timeout=30_000)
        expect(view).to_have_attribute("data-moving", "0")
        assert same(camera(view), cam), (camera(view), cam)
        after = view.evaluate("el => el.gvScreenBox('L0.t0/Tanh0')")
        assert abs(after["x"] - box["x"]) <= SLACK and abs(after["y"] - box["y"]) <= SLACK
        assert float(view.get_attribute("data-label-px")) >= 12  # ops readable from the back
        e = view.evaluate(EXTENT)
        assert e["width"] >= FILL or e["height"] >= FILL, e
    finally:
        context.close()
