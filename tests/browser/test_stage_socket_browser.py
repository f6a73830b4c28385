"""The Playground's moves and Your code's Runs in Chromium, with and without their own sockets.

Through make serve (deploy/serve.py, one replica, its default limits) a drag of T sends
each value on the socket ``deploy/replica_app.py`` serves (``stockdemo/ui/stage_route.py``)
and no script run is asked for while the mouse is down; the session (its link, the panels,
"Pin as A") catches up once the learner stops. A Run of a learner's code goes on the code's
socket (``stockdemo/ui/code_route.py``), its graph is drawn from the answer, and only then
does the page's run take it. Where app.py is served alone (the ``server`` fixture, as on
Community Cloud) there is no socket: the same drag is runs of the stage, as it always was.

What went where is read off the wire: Playwright sees every websocket frame the page sends.
The knobs state of a run travels in Streamlit's stream with the request number (``"req"``).
"""

from __future__ import annotations

import contextlib
import re

import pytest
from playwright.sync_api import expect

from deploy.replica_limits import CODE_SOCKET, STAGE_SOCKET, STREAM_PATH
from harness.drive import VIEW, wait_for_run
from harness.editor import editor_line, retype_line, shows_graph_of, text_in_editor
from harness.graph_view import open_stage, t_slider
from stockdemo import RunConfig, run
from stockdemo.graph.diff import graph_diff

pytestmark = pytest.mark.browser


SERVE_REPLICAS = 1  # the served fixture (tests/conftest.py): one replica


class Wire:
    """Every frame the page sends and gets on its websockets, by path, with the mouse state."""

    def __init__(self, page) -> None:
        self.down = False
        self.sent: list[tuple[str, bool, str | bytes]] = []  # (path, mouse down, frame)
        self.got: list[tuple[str, str | bytes]] = []
        self.log: list[tuple[str, str, bytes]] = []  # ("sent" or "got", path, frame), in order
        self.opened: list[str] = []
        page.on("websocket", self._opened)

    def _opened(self, ws) -> None:
        path = re.sub(r"^wss?://[^/]+", "", ws.url).split("?")[0]
        self.opened.append(path)
        ws.on("framesent", lambda frame: self._saw("sent", path, frame))
        ws.on("framereceived", lambda frame: self._saw("got", path, frame))

    def _saw(self, way: str, path: str, frame: str | bytes) -> None:
        if way == "sent":
            self.sent.append((path, self.down, frame))
        else:
            self.got.append((path, frame))
        self.log.append((way, path, _bytes(frame)))

    def first(self, way: str, path: str, holding: bytes) -> int:
        """The place in the log of the first frame sent or got on ``path`` holding ``holding``."""
        return next(i for i, (w, p, f) in enumerate(self.log)
                    if w == way and p.endswith(path) and holding in f)

    def knobs_runs(self, down: bool) -> int:
        """Frames on Streamlit's stream carrying the stage's values (a run asked for)."""
        return sum(1 for path, d, frame in self.sent
                   if path.endswith(STREAM_PATH) and d is down and b'"req"' in _bytes(frame))

    def on_socket(self, down: bool | None = None) -> list[str]:
        return [_bytes(f).decode() for path, d, f in self.sent if path == STAGE_SOCKET and down in (None, d)]


def _bytes(frame: str | bytes) -> bytes:
    return frame if isinstance(frame, bytes) else frame.encode()


def drag_t(page, wire: Wire, start: int, end: int) -> int:
    """With the link's panel open, drag the T thumb from ``start`` to ``end`` a step every 60 ms
    -> the value it ended on."""
    page.get_by_role("radio", name="Share this run").check()
    wait_for_run(page, ready="text=Link to this run")
    t_slider(page).scroll_into_view_if_needed()  # the radio's click scrolled the page down
    box = t_slider(page).bounding_box()

    def x_of(t: int) -> float:  # the thumb's centre for value t (a 16 px thumb, 1..200)
        return box["x"] + 8 + (t - 1) / 199 * (box["width"] - 16)

    y = box["y"] + box["height"] / 2
    page.mouse.move(x_of(start), y)
    page.mouse.down()
    wire.down = True
    for t in range(start + 1, end + 1):
        page.mouse.move(x_of(t), y)
        page.wait_for_timeout(60)  # a hand's pace: answers while the mouse is down are what is tested
    # the last value drawn with the mouse still down (by the stage socket, or by a run)
    expect(page.locator(VIEW)).to_have_attribute("data-nodes", nodes(end), timeout=30_000)
    wire.down = False
    page.mouse.up()
    return int(t_slider(page).input_value())


def nodes(seq_len: int) -> str:
    return str(len(run(RunConfig(seq_len=seq_len)).graph.nodes))


def settled_on(page, final: int) -> None:
    """The session caught up: the link in the URL and the panels' link name the last T."""
    expect(page).to_have_url(re.compile(rf"seq_len={final}\b"), timeout=30_000)
    wait_for_run(page)
    expect(page.get_by_text(re.compile(rf"/playground\?.*seq_len={final}\b"))).to_be_visible()


@contextlib.contextmanager
def wired_page(browser, height: int):
    """A page of a context of its own at 1440 x ``height``, its sockets on a Wire -> (page, wire);
    no JavaScript error on it by the end."""
    context = browser.new_context(viewport={"width": 1440, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield page, Wire(page)
        assert errors == []
    finally:
        context.close()


def test_a_drag_through_make_serve_is_answered_on_the_stage_socket_and_the_link_catches_up(browser, served):
    with wired_page(browser, 1000) as (page, wire):
        view = open_stage(page, served.url)
        final = drag_t(page, wire, 5, 30)
        expect(view).to_have_attribute("data-nodes", nodes(final), timeout=30_000)
        moves = wire.on_socket(down=True)
        assert len(moves) >= 3 and int(view.get_attribute("data-direct")) == len(wire.on_socket())
        assert wire.knobs_runs(down=True) == 0  # no run asked for while the mouse was down
        answers = [f for path, f in wire.got if path == STAGE_SOCKET]
        assert len(answers) >= 3 and all(b'"stage"' in _bytes(a) for a in answers)
        assert f'"seq_len": {final}' in moves[-1] or f'"seq_len":{final}' in moves[-1]
        assert view.get_attribute("data-resent") in (None, "0")  # every move answered in time
        settled_on(page, final)
        # "Pin as A" pins what the socket drew: T as on screen, in the link and in pane A.
        view.get_by_role("button", name="Pin as A").click()
        expect(view).to_have_attribute("data-compare", "1", timeout=30_000)
        expect(page).to_have_url(re.compile(rf"compare=.*seq_len={final}|seq_len={final}.*compare="))
        on_socket, runs = len(wire.on_socket()), wire.knobs_runs(down=False)
        t_slider(page).focus()
        page.keyboard.press("ArrowRight")
        added = graph_diff(run(RunConfig(seq_len=final)).graph, run(RunConfig(seq_len=final + 1)).graph)
        expect(view).to_have_attribute("data-added", str(len(added.added_nodes)), timeout=30_000)
        # Run A beside it is drawn by a run: with it, a move is a run again, not the socket's.
        assert len(wire.on_socket()) == on_socket and wire.knobs_runs(down=False) > runs


def test_where_app_py_is_served_alone_a_drag_is_runs_of_the_stage_with_no_socket(page, server):
    wire = Wire(page)
    view = open_stage(page, server)
    final = drag_t(page, wire, 5, 20)
    expect(view).to_have_attribute("data-nodes", nodes(final), timeout=30_000)
    assert STAGE_SOCKET not in wire.opened and view.get_attribute("data-direct") is None
    assert wire.knobs_runs(down=True) >= 3  # each value a run, as before the socket
    settled_on(page, final)


def test_a_run_through_make_serve_is_drawn_from_the_codes_socket_before_the_page_takes_it(browser, served):
    with wired_page(browser, 900) as (page, wire):
        page.goto(f"{served.url}/code")
        wait_for_run(page, ready=f"{VIEW}[data-drawn-graph]")
        seed_graph = page.locator(VIEW).get_attribute("data-drawn-graph")
        editor_line(page, "self.fc(").click()
        page.keyboard.press("End")
        page.keyboard.type("  # on the socket")
        page.keyboard.press("Control+Enter")
        expect(page.locator(VIEW)).not_to_have_attribute("data-drawn-graph", seed_graph, timeout=30_000)
        shows_graph_of(page, text_in_editor(page))
        expect(page.locator(".ce-status")).to_have_text(re.compile(r"^Ran in \d+ ms\.$"), timeout=30_000)
        expect(page).to_have_url(re.compile(r"[?&]code="), timeout=30_000)  # the page's run took it
        marker = b"# on the socket"
        answered = wire.first("got", CODE_SOCKET, b'"view": {')
        assert wire.first("sent", CODE_SOCKET, marker) < answered < wire.first("sent", STREAM_PATH, marker)
        # A run that builds no graph: the socket leaves it to the page, which shows Python's error.
        retype_line(page, "# on the socket", "return self.fc(out[:, -1, :]) + no_such_name")
        page.keyboard.press("Control+Enter")
        expect(page.locator(".ce-status")).to_have_text(re.compile(r"NameError"), timeout=30_000)
        expect(page.get_by_text("name 'no_such_name' is not defined").first).to_be_visible()
        refused = wire.first("got", CODE_SOCKET, b'"view": null')
        assert refused < wire.first("sent", STREAM_PATH, b"no_such_name")
