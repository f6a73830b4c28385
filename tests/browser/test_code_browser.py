"""The "Your code" page in Chromium: the editor, Ctrl+Enter, the graph beside it at every size,
edits that glide, errors on the learner's line, prints, hover, links, a class, rolled loops.

Every count is autograd's own: the code is run here too (``harness.learners.here``) and
its graph walked from ``predictions`` (``harness.autograd.ops_by_type``). Positions are
read through the view's test hooks (``el.gvScreenBox(id)``, ``el.gvNew()``,
stockdemo/ui/graph_view.py) and the editor's (``el.ceText()``, stockdemo/ui/code_editor.py).
All tests share the session's one server and one browser; none sleeps a fixed time.
"""

from __future__ import annotations

import difflib
from collections import Counter

import pytest
from playwright.sync_api import expect

from harness.autograd import walks_at_each_backward
from harness.class_drive import go, join_by_link, start_class
from harness.drive import SHOTS, VIEW, wait_for_run
from harness.editor import (
    editor_line,
    figure,
    nodes_of,
    open_code,
    pick,
    retype_line,
    run_with_keys,
    shows_graph_of,
    text_in_editor,
    wait_for_text,
)
from harness.learners import LONG_LOOP, here
from stockdemo.code.link import code_to_link
from stockdemo.graph.ids import graph_of_record
from stockdemo.layout.by_code import layout_code
from stockdemo.sandbox import SEED_CODE, run_code
from stockdemo.ui.classmode.session import HINT

pytestmark = pytest.mark.browser

PHONE = (390, 844)
T5 = "torch.randn(10, 5, 3)  # batch, time steps, features"


# Counts the messages the server sends from now on.
COUNT_MESSAGES = """() => { window.__messages = 0;
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!this.__counted) {
      this.__counted = true;
      this.addEventListener('message', () => { window.__messages++; });
    }
    return send.call(this, data);
  }; }"""


def picture_of(source: str, unroll: frozenset[str] = frozenset()):
    """The picture the page draws for ``source``: the sandbox's record, laid out by its code.
    (The test's own reference run: on a box busy enough to stop it on the wall clock, once
    more, then a clear failure rather than a TypeError on its missing graph.)"""
    run = run_code(source)
    if not run.ok:
        run = run_code(source)
    assert run.ok and run.graph is not None, run.status
    return layout_code(graph_of_record(run.graph), "auto", unroll=unroll)


def within(box: dict, area: dict, slack: float = 0.5) -> bool:
    return (box["y"] >= area["y"] - slack and box["y"] + box["height"] <= area["y"] + area["height"] + slack
            and box["x"] >= area["x"] - slack)


def forward_lines(page) -> list:
    """The editor's lines from ``def forward`` to its ``return``: the body a learner edits."""
    lines = page.locator(".cm-line")
    texts = lines.all_inner_texts()
    first = next(i for i, t in enumerate(texts) if t.strip().startswith("def forward"))
    last = next(i for i in range(first, len(texts)) if texts[i].strip().startswith("return"))
    return [lines.nth(i) for i in range(first, last + 1)]


def forward_and_graph_on_screen(page) -> None:
    """The body of forward (in the editor's visible part) and the whole graph view, in the window."""
    size = page.viewport_size
    window = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
    code = page.locator(".cm-scroller").bounding_box()
    for code_line in forward_lines(page):
        box = code_line.bounding_box()
        assert within(box, window) and within(box, code), (code_line.inner_text(), box, code)
    graph = page.locator(VIEW).bounding_box()
    assert within(graph, window) and graph["x"] + graph["width"] <= size["width"] + 0.5, graph


def node_boxes(page, ids) -> dict[str, dict]:
    """Where the view draws each node now, in window pixels (its test hook)."""
    return page.locator(VIEW).evaluate(
        "(el, ids) => Object.fromEntries(ids.map(id => [id, el.gvScreenBox(id)]))", list(ids))


def centre(box: dict) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


PASTE = """(el, text) => { const data = new DataTransfer(); data.setData("text/plain", text);
  el.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true})); }"""
GONE_LINES = ".cm-deletedChunk .cm-deletedLine"  # the merge view's red lines: text gone from the base


def paste_over_all(page, text: str) -> None:
    """Ctrl+A, then a paste of ``text``: the browser's paste event, read by CodeMirror's own handler."""
    content = page.locator(".cm-content")
    content.focus()
    page.keyboard.press("Control+a")
    content.evaluate(PASTE, text)
    wait_for_text(page, text)


def gone_from(base: str, source: str) -> list[str]:
    """The lines of ``base`` that ``source`` no longer has, as a diff lists them."""
    lines = difflib.ndiff(base.splitlines(), source.splitlines())
    return [line[2:] for line in lines if line.startswith("- ")]


def keep(path, name: str) -> None:
    """A screenshot to look at, in artifacts/ (the README's copies in docs/ are chosen by hand:
    a test never changes the repository, which the hostile-code suite watches)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path.screenshot(path=str(SHOTS / f"{name}.png"))


def test_the_editor_opens_with_the_seed_and_ctrl_enter_or_run_draws_the_graph_of_the_code(browser, server):
    page = open_code(browser, server)
    try:
        assert text_in_editor(page) == SEED_CODE
        shows_graph_of(page, SEED_CODE)
        retype_line(page, "input_data = torch.randn(10, 5, 3)", "input_data = torch.randn(10, 7, 3)")
        seven = SEED_CODE.replace(T5, "torch.randn(10, 7, 3)")
        assert text_in_editor(page) == seven
        graph = page.locator(VIEW).get_attribute("data-graph")
        page.evaluate(COUNT_MESSAGES)
        run_with_keys(page)
        shows_graph_of(page, seven)  # two more steps: autograd's count for T 7
        assert page.locator(VIEW).get_attribute("data-graph") != graph
        # The Run reran the editor and its graph alone: a whole page's run sends ~40 messages
        # (the sidebar's and the frame's elements too), this one the workspace's.
        assert 0 < page.evaluate("window.__messages") < 20
        page.wait_for_function("() => new URL(location.href).searchParams.has('code')")  # a link to it
        expect(page.locator(".ce-status")).to_contain_text("Ran in")
        # The Run button does the same.
        retype_line(page, "input_data = torch.randn(10, 7, 3)", "input_data = torch.randn(10, 3, 3)")
        page.get_by_role("button", name="Run", exact=False).first.click()
        shows_graph_of(page, SEED_CODE.replace(T5, "torch.randn(10, 3, 3)"))
        assert page.js_errors == []
    finally:
        page.context.close()


@pytest.mark.parametrize("size,present", [((1440, 900), False), ((1280, 720), True)],
                         ids=["1440x900", "1280x720-present"])
def test_the_body_of_forward_and_the_whole_graph_are_on_screen_together(browser, server, size, present):
    page = open_code(browser, server, "?present=1" if present else "", size=size)
    try:
        forward_and_graph_on_screen(page)
        pick(page, "skip")  # ...and after an edit, its diff in the editor
        forward_and_graph_on_screen(page)
        keep(page, f"code-{size[0]}x{size[1]}{'-present' if present else ''}")
    finally:
        page.context.close()


def test_on_a_phone_forward_and_the_whole_graph_are_one_swipe_apart(browser, server):
    """One swipe: from where the body of forward is on screen, a scroll of at most one
    screen's height puts the whole graph view on screen. Measured in the page's scroller
    (Streamlit scrolls its main area), then done with the wheel and checked."""
    page = open_code(browser, server, size=PHONE)
    try:
        height = PHONE[1]
        scroller = page.locator("[data-testid='stMain']")
        top = scroller.evaluate("el => el.scrollTop")
        body = [b.bounding_box() for b in forward_lines(page)]
        graph = page.locator(VIEW).bounding_box()
        assert graph["height"] <= height  # the whole view fits on the phone's screen
        forward_top = body[0]["y"] + top
        graph_bottom = graph["y"] + graph["height"] + top
        swipe = max(0.0, graph_bottom - height - forward_top)  # forward at the top, then this far
        assert swipe <= height, (forward_top, graph_bottom)
        # Done for real: forward at the top of the screen, then one turn of the wheel.
        start = scroller.evaluate("(el, y) => { el.scrollTop = y; return el.scrollTop; }", int(forward_top))
        window = {"x": 0, "y": 0, "width": PHONE[0], "height": height}
        assert all(within(b.bounding_box(), window) for b in forward_lines(page))
        page.mouse.move(4, height / 2)  # beside the editor: the wheel scrolls the page
        page.mouse.wheel(0, swipe + 1)
        bottom = scroller.evaluate("e => e.scrollHeight - e.clientHeight")
        page.wait_for_function("([el, y]) => el.scrollTop >= y - 1",
                               arg=[scroller.element_handle(), min(start + swipe, bottom)])
        box = page.locator(VIEW).bounding_box()
        assert box["y"] >= -0.5 and box["y"] + box["height"] <= height + 0.5, box
        print(f"\nphone 390x844: the graph view is {swipe:.0f} px of scrolling from the body of forward")
        keep(page, "code-phone")
    finally:
        page.context.close()


@pytest.mark.parametrize("by", ["pill", "hand"])
def test_a_skip_connection_adds_one_add_node_ringed_and_the_others_keep_their_place(browser, server, by):
    page = open_code(browser, server)
    try:
        view = page.locator(VIEW)
        before = picture_of(SEED_CODE)
        boxes = node_boxes(page, [n.id for n in before.nodes])
        scale = view.get_attribute("data-scale")
        if by == "pill":
            source = pick(page, "skip")
        else:
            editor_line(page, "out, _ = self.rnn(x)").click()
            page.keyboard.press("End")
            page.keyboard.press("Enter")  # the editor indents the new line as forward's body
            page.keyboard.type("out = out + x[:, :, :1]")
            source = SEED_CODE.replace("        out, _ = self.rnn(x)\n",
                                       "        out, _ = self.rnn(x)\n        out = out + x[:, :, :1]\n")
            assert text_in_editor(page) == source
            run_with_keys(page)
            shows_graph_of(page, source)
        assert nodes_of(source) == nodes_of(SEED_CODE) + 1
        new = view.evaluate("el => el.gvNew()")
        assert [n["op"] for n in new] == ["AddBackward0"]  # one node, ringed as new
        after = picture_of(source)
        assert new[0]["id"] not in before.graph.by_id and new[0]["id"] in after.graph.by_id
        # Every node that was there is still drawn; the camera kept its scale; each moved on screen
        # as far as the layout moved it (the ones it left in place kept their place), and the
        # ones under the new Add moved down together, by the one row it takes. (The data that
        # jumps past the RNN is an edge from the input to the Add: the input and the few nodes
        # beside its path step aside; the rest keep their column.)
        assert view.get_attribute("data-scale") == scale
        was = {n.id: n for n in before.nodes}
        now = node_boxes(page, list(was))
        k = float(scale)
        for node in after.nodes:
            if node.id not in was:
                continue
            dx, dy = (node.x - was[node.id].x) * k, (node.y - was[node.id].y) * k
            assert abs(now[node.id]["x"] - boxes[node.id]["x"] - dx) <= 2, (node.id, dx)
            assert abs(now[node.id]["y"] - boxes[node.id]["y"] - dy) <= 2, (node.id, dy)
        assert sum(1 for n in after.nodes if n.id in was and n.x == was[n.id].x) >= len(was) * 3 // 4
        stayed = sum(1 for n in after.nodes if n.id in was and n.y == was[n.id].y)
        moved = {round(n.y - was[n.id].y, 3) for n in after.nodes if n.id in was and n.y != was[n.id].y}
        assert stayed >= len(was) * 3 // 4 and len(moved) <= 1, (stayed, moved)
        assert page.js_errors == []
    finally:
        page.context.close()


def test_a_shape_error_marks_its_line_and_shows_torchs_message(browser, server):
    page = open_code(browser, server)
    try:
        retype_line(page, "return self.fc(out[:, -1, :])", "return self.fc(out[:, -1, :2])")
        source = SEED_CODE.replace("        return self.fc(out[:, -1, :])  # only the last time step matters",
                                   "        return self.fc(out[:, -1, :2])")
        _, raised, _ = here(source)
        assert isinstance(raised, RuntimeError)
        run_with_keys(page)
        marked = page.locator(".sd-error-line")
        expect(marked).to_have_count(1, timeout=60_000)
        assert marked.inner_text().strip() == "return self.fc(out[:, -1, :2])"
        expect(page.locator(".sd-error-note")).to_have_text(f"RuntimeError: {raised}")
        alert = page.locator("[data-testid='stAlertContentError']")
        expect(alert).to_contain_text(str(raised))
        expect(page.locator(".ce-status")).to_have_text(
            f"Failed on line {source.splitlines().index('        return self.fc(out[:, -1, :2])') + 1}: "
            "RuntimeError.")
    finally:
        page.context.close()


def test_a_print_in_the_loop_prints_one_line_per_time_step(browser, server):
    page = open_code(browser, server)
    try:
        source = pick(page, "print")
        _, _, printed = here(source)
        steps = [t for t in printed.splitlines() if t.startswith("t=")]
        assert len(steps) == 5  # T of the seed's input
        shown = page.locator(".ce-out").inner_text().splitlines()
        assert [t for t in shown if t.startswith("t=")] == steps
    finally:
        page.context.close()


def test_hovering_a_node_highlights_the_line_that_made_it(browser, server):
    page = open_code(browser, server)
    try:
        source = pick(page, "skip")
        add = page.locator(VIEW).evaluate("el => el.gvNew()")[0]["id"]
        page.mouse.move(*centre(node_boxes(page, [add])[add]))
        expect(page.locator(VIEW)).to_have_attribute("data-hover", add)
        hovered = page.locator(".sd-hover-line")
        expect(hovered).to_have_count(1)
        skip_line = next(t for t in source.splitlines() if "skip connection" in t)
        assert hovered.inner_text() == skip_line
        # A node of the RNN: the line that called it.
        tanh = next(n.id for n in picture_of(source).nodes if n.id.endswith("/Tanh0"))
        page.mouse.move(*centre(node_boxes(page, [tanh])[tanh]))
        expect(page.locator(VIEW)).to_have_attribute("data-hover", tanh)
        expect(hovered).to_have_text("        out, _ = self.rnn(x)")
        page.mouse.move(2, 2)  # off the graph: no line
        expect(hovered).to_have_count(0)
    finally:
        page.context.close()


def test_the_while_edit_records_graphs_of_different_lengths_for_two_seeds_and_a_link_reopens_them(
        browser, server):
    page = open_code(browser, server)
    try:
        first = pick(page, "while")
        retype_line(page, "torch.manual_seed(0)", "torch.manual_seed(1)")
        second = first.replace("torch.manual_seed(0)", "torch.manual_seed(1)")
        run_with_keys(page)
        shows_graph_of(page, second)
        assert nodes_of(first) != nodes_of(second)  # the data decided how many steps
        wait_for_run(page, ready=None)
        link, graph = page.url, page.locator(VIEW).get_attribute("data-graph")
        assert "code=" in link
    finally:
        page.context.close()
    again = open_code(browser, server, link[link.index("?"):])
    try:
        assert text_in_editor(again) == second
        shows_graph_of(again, second)
        assert again.locator(VIEW).get_attribute("data-graph") == graph  # the same picture
    finally:
        again.context.close()


def test_a_click_on_a_rolled_loop_draws_every_step(browser, server):
    page = open_code(browser, server, f"?code={code_to_link(LONG_LOOP)}")
    try:
        view = page.locator(VIEW)
        rolled = picture_of(LONG_LOOP)
        (fold,) = rolled.folds
        expect(view).to_have_attribute("data-folds", "1")
        assert view.get_attribute("data-nodes") == str(len(rolled.nodes))
        page.mouse.click(*centre(node_boxes(page, [fold])[fold]))
        unrolled = picture_of(LONG_LOOP, frozenset({fold}))
        expect(view).to_have_attribute("data-nodes", str(len(unrolled.nodes)), timeout=60_000)
        expect(view).to_have_attribute("data-folds", "0")
        assert len(unrolled.nodes) > len(rolled.nodes) and not unrolled.folds
        steps = {n.id.split("@")[1].split("/")[0] for n in unrolled.nodes if "@" in n.id}
        assert steps == {str(t) for t in range(40)}  # every time step drawn
    finally:
        page.context.close()


def test_in_a_class_the_follower_sees_the_teachers_code_and_graph_locked(browser, server):
    teacher, _, link = start_class(browser, server)
    student = join_by_link(browser, link)[0]
    try:
        go(teacher, "code")
        wait_for_run(student, ready=f"{VIEW}[data-drawn-graph]")
        source = pick(teacher, "attention")
        wait_for_text(student, source)
        shows_graph_of(student, source)
        assert student.locator(VIEW).get_attribute("data-nodes") == teacher.locator(VIEW).get_attribute(
            "data-nodes")
        expect(student.locator(".ce-run")).to_be_disabled()
        editor_line(student, "torch.manual_seed(0)").click()
        student.keyboard.type("x = 1\n")
        student.keyboard.press("Control+Enter")
        assert text_in_editor(student) == source  # the follower's editor takes no change
        expect(student.locator(".ce-status")).to_have_text(HINT)  # says why
        # The teacher's own edit, typed and run, reaches the class too.
        retype_line(teacher, "torch.manual_seed(0)", "torch.manual_seed(4)")
        run_with_keys(teacher)
        mine = source.replace("torch.manual_seed(0)", "torch.manual_seed(4)")
        shows_graph_of(teacher, mine)
        wait_for_text(student, mine)
        shows_graph_of(student, mine)
    finally:
        for page in (teacher, student):
            page.context.close()


def test_a_ready_made_edit_shows_its_diff_and_a_pasted_program_shows_none_of_the_old_one(browser, server):
    page = open_code(browser, server)
    try:
        source = pick(page, "while")
        gone = gone_from(SEED_CODE, source)
        assert len(gone) == 4
        expect(page.locator(GONE_LINES)).to_have_text(gone)  # the seed's lines the edit replaced, in red
        keep(page, "code-edit-diff")
        paste_over_all(page, LONG_LOOP)  # another program: none of its lines are the edit's
        assert len(gone_from(source, LONG_LOOP)) > 20
        expect(page.locator(".cm-deletedChunk")).to_have_count(0)
        expect(page.locator(".cm-changedLine, .cm-inlineChangedLine")).to_have_count(0)
        keep(page, "code-pasted")
        run_with_keys(page)
        shows_graph_of(page, LONG_LOOP)
        expect(page.locator(".cm-deletedChunk")).to_have_count(0)
        assert page.js_errors == []
    finally:
        page.context.close()


def test_after_a_run_a_typed_change_shows_just_that_change_in_its_line(browser, server):
    page = open_code(browser, server)
    try:
        line = "input_data = " + T5
        retype_line(page, line, line.replace("(10, 5, 3)", "(10, 7, 3)"))
        changed = page.locator(".cm-inlineChangedLine")
        expect(changed).to_have_text([line.replace("(10, 5, 3)", "(10, 57, 3)")])  # 5 struck out, 7 after it
        expect(page.locator("del.cm-deletedText")).to_have_text(["5"])
        run_with_keys(page)
        shows_graph_of(page, SEED_CODE.replace("(10, 5, 3)", "(10, 7, 3)"))
        expect(changed).to_have_count(0)  # the run is the new base: nothing changed since
        retype_line(page, line.replace("(10, 5, 3)", "(10, 7, 3)"), line.replace("(10, 5, 3)", "(10, 3, 3)"))
        expect(page.locator("del.cm-deletedText")).to_have_text(["7"])  # since the run, not since the seed
        expect(page.locator(".cm-changedText")).to_have_text(["3"])
        expect(changed).to_have_count(1)
        expect(page.locator(GONE_LINES)).to_have_count(0)  # one line changed, in its place: no red line
        keep(page, "code-typed-since-run")
        assert page.js_errors == []
    finally:
        page.context.close()


GROWING_LOOP = SEED_CODE + """
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    loss = model(input_data[:, :step + 1]).pow(2).mean()  # one more time step each iteration
    print(f"step {step}: loss {loss.item():.4f}")
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_training_loop_shows_its_five_graphs_and_steps_through_each_as_torch_walked_it(browser, server):
    (_, raised, _), walks = walks_at_each_backward(lambda: here(GROWING_LOOP))
    assert raised is None and len(walks) == 5
    film = run_code(GROWING_LOOP).film
    page = open_code(browser, server)
    try:
        paste_over_all(page, GROWING_LOOP)
        run_with_keys(page)
        words = page.get_by_text("This run built 5 graphs, each freed by its backward()").first
        expect(words).to_be_visible(timeout=60_000)
        stepper = page.locator(f"{VIEW} [data-knob='film']")  # the stage's own, as the Playground's T
        thumb = stepper.locator("input[type='range']")
        expect(thumb).to_have_value("5")  # the last: the graph of predictions, made before the loop
        for i in reversed(range(5)):
            thumb.focus()
            page.keyboard.press("ArrowLeft")
            expect(thumb).to_have_value(str(i))
            expect(stepper.get_by_text(f"graph {i + 1} of 5").first).to_be_visible()
            expect(figure(page, "Graph nodes")).to_have_text(  # + input_data and the loss
                f"{sum(walks[i].values()) + 2:,}", timeout=60_000)
            wait_for_run(page, ready=None)
            expect(page.locator(VIEW)).to_have_attribute("data-moving", "0")
            drawn = page.locator(VIEW).evaluate("el => Object.keys(el.gvCentres())")
            record = graph_of_record(film[i])
            assert sorted(drawn) == sorted(n.id for n in record.nodes), f"graph {i + 1}"
            ops = Counter(n.op for n in record.nodes if n.op)  # not the output's box
            assert dict(ops) == walks[i], f"graph {i + 1}"
            if i == 2:
                for box in (words, thumb, page.locator(VIEW)):
                    assert within(box.bounding_box(), {"x": 0, "y": 0, "width": 1440, "height": 900})
                keep(page, "code-training-loop-graph-3-of-5-1440x900")
        assert page.js_errors == []
    finally:
        page.context.close()
