"""deploy/replica_limits.py: a replica's seats and each session's message rate, driven as ASGI.

The middleware sits in front of Streamlit (deploy/replica_app.py); here it sits in
front of a small ASGI app that records what reached it, so each test says what
got through, what was refused and how.
"""

from __future__ import annotations

import asyncio
import re
import time
from types import SimpleNamespace

import pytest

from deploy import replica_limits
from deploy.replica_limits import ReplicaLimits, is_page_load
from harness.helpers import run_async

RETRY_S = 20


class Inner:
    """The app behind the limits: answers pages with 200, holds websockets open, answers each
    message (as Streamlit answers a rerun) and records how each session ended."""

    def __init__(self) -> None:
        self.pages: list[str] = []
        self.messages: list[tuple[int, bytes, float]] = []  # (session, message, when read)
        self.ended: dict[int, dict] = {}  # session -> the message that ended it

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            self.pages.append(scope["path"])
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"app"})
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                self.ended[scope["session"]] = message
                return
            self.messages.append((scope["session"], message["bytes"], time.monotonic()))
            await send({"type": "websocket.send", "bytes": b"answer to " + message["bytes"]})


def limits(capacity: int = 2, hard_cap: int = 3, burst: float = 40, per_s: float = 8,
           held=lambda session_id: False, unheld: tuple[float, float] = (30, 10)) -> ReplicaLimits:
    return ReplicaLimits(Inner(), capacity=capacity, hard_cap=hard_cap, burst=burst, per_s=per_s,
                         retry_s=RETRY_S, held=held, unheld=unheld)


async def get(mw: ReplicaLimits, path: str, cookie: str = "") -> tuple[int, dict[str, str], bytes]:
    sent = []
    scope = {"type": "http", "method": "GET", "path": path,
             "headers": [(b"cookie", cookie.encode())] if cookie else []}

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    await mw(scope, receive, send)
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


class Socket:
    """One browser's websocket to ``path`` (Streamlit's stream): ``messages`` sent as fast as it can."""

    def __init__(self, mw: ReplicaLimits, session: int, messages: int = 0,
                 path: str = "/_stcore/stream", resumes: str = "") -> None:
        """``resumes``: the session id it names, as Streamlit's frontend does when it reconnects."""
        self.sent: list[dict] = []
        self.gone = False  # the client went: sends fail as uvicorn's do
        self.incoming: asyncio.Queue = asyncio.Queue()
        self.incoming.put_nowait({"type": "websocket.connect"})
        for i in range(messages):
            self.incoming.put_nowait({"type": "websocket.receive", "bytes": b"%d" % i})
        scope = {"type": "websocket", "path": path, "headers": [], "session": session,
                 "subprotocols": ["streamlit", "2|ab|cd|1", *([resumes] if resumes else [])],
                 "extensions": {"websocket.http.response": {}}}

        async def send(message):
            if self.gone:
                raise OSError("client disconnected")
            self.sent.append(message)

        self.task = asyncio.create_task(mw(scope, self.incoming.get, send))

    def close(self) -> None:
        self.incoming.put_nowait({"type": "websocket.disconnect", "code": 1000})


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_page_load_past_capacity_gets_a_full_page_that_retries_by_itself():
    async def scenario():
        mw = limits(capacity=2)
        sockets = [Socket(mw, i) for i in range(2)]
        await settle()
        status, headers, body = await get(mw, "/playground?seq_len=7")
        assert status == 503 and mw.app.pages == []
        retry = int(headers["retry-after"])
        assert RETRY_S <= retry <= RETRY_S * 3 // 2
        page = body.decode()
        assert "The class is full" in page
        assert f'<meta http-equiv="refresh" content="{retry}">' in page and f"{retry} seconds" in page
        assert "<script" not in page and "http" not in page.split("<body>")[1]  # offline, no code
        assert headers["content-type"].startswith("text/html")
        assert headers["set-cookie"].startswith("SRV=; Max-Age=0")  # the retry may go elsewhere
        sockets[0].close()
        await sockets[0].task
        status, _, body = await get(mw, "/playground?seq_len=7")
        assert (status, body) == (200, b"app")  # a seat came free
        sockets[1].close()

    run_async(scenario())


def test_files_and_streamlit_calls_are_never_refused_by_a_full_replica():
    async def scenario():
        mw = limits(capacity=1, hard_cap=1)
        socket = Socket(mw, 0)
        await settle()
        for path in ("/static/js/index.js", "/app/static/graph_view.js", "/_stcore/health",
                     "/_stcore/host-config", "/favicon.png"):
            assert (await get(mw, path))[0] == 200, path
        assert (await get(mw, "/"))[0] == 503
        socket.close()

    run_async(scenario())


def test_a_browser_that_already_had_the_app_comes_back_up_to_the_hard_cap():
    async def scenario():
        mw = limits(capacity=2, hard_cap=3)
        sockets = [Socket(mw, i) for i in range(2)]
        await settle()
        returning = "SRV=r1; _streamlit_xsrf=2|ab|cd|123"
        assert (await get(mw, "/playground"))[0] == 503  # a new learner: full
        assert (await get(mw, "/playground", returning))[0] == 200  # a reload: in
        sockets.append(Socket(mw, 2))  # its websocket
        await settle()
        assert (await get(mw, "/playground", returning))[0] == 503  # past the hard cap
        for s in sockets:
            s.close()

    run_async(scenario())


def test_page_loads_alone_hold_no_seat():
    async def scenario():
        mw = limits(capacity=2)
        assert [(await get(mw, "/"))[0] for _ in range(50)] == [200] * 50  # a loop of page loads
        sockets = [Socket(mw, i) for i in range(2)]  # two sessions: now it is full
        await settle()
        assert (await get(mw, "/"))[0] == 503
        for s in sockets:
            s.close()

    run_async(scenario())


def test_a_websocket_past_the_hard_cap_is_refused_before_the_upgrade():
    async def scenario():
        mw = limits(capacity=1, hard_cap=2)
        sockets = [Socket(mw, i) for i in range(3)]
        await settle()
        await sockets[2].task  # refused: done at once
        assert sockets[2].sent[0] == {"type": "websocket.http.response.start", "status": 503,
                                      "headers": [(b"retry-after", str(RETRY_S).encode())]}
        assert [s.sent[0]["type"] for s in sockets[:2]] == ["websocket.accept"] * 2
        assert mw.open == 2 and mw.refused["websocket"] == 1
        for s in sockets[:2]:
            s.close()
            await s.task
        assert mw.open == 0

    run_async(scenario())


def _statuses(sockets: list[Socket]) -> list[int | str]:
    return [s.sent[0].get("status", s.sent[0]["type"]) for s in sockets]


def test_a_lecture_reconnecting_to_the_sessions_it_holds_comes_back_at_once_a_loop_does_not():
    held = {f"s{i}" for i in range(200)}

    async def scenario():
        mw = limits(capacity=200, hard_cap=300, held=held.__contains__, unheld=(3, 1))
        lecture = [Socket(mw, i, resumes=f"s{i}") for i in range(200)]
        await settle()
        assert _statuses(lecture) == ["websocket.accept"] * 200  # no pace: each session is held here
        for s in lecture:
            s.close()
            await s.task
        again = []
        for _ in range(replica_limits.RESUMES):  # the same tab, cut again and again
            again.append(Socket(mw, 0, resumes="s0"))
            await settle()
            again[-1].close()
            await again[-1].task
        assert _statuses(again) == ["websocket.accept"] * (replica_limits.RESUMES - 1) + [429]
        assert again[-1].sent[0]["headers"] == [(b"retry-after", b"10")]
        assert mw.refused["resumed too often"] == 1 and mw.refused["unheld session"] == 0
        assert mw.open == 0

    run_async(scenario())


def test_reconnects_naming_sessions_held_nowhere_here_are_paced_and_new_sessions_are_not(monkeypatch):
    clock = SimpleNamespace(monotonic=lambda: now)
    now = 1000.0
    monkeypatch.setattr(replica_limits, "time", clock)

    async def scenario():
        nonlocal now
        mw = limits(capacity=50, hard_cap=50, unheld=(3, 2))  # it holds no session
        claims = [Socket(mw, i, resumes=f"forged-{i}") for i in range(5)]
        fresh = [Socket(mw, 10 + i) for i in range(5)]  # first websockets: name no session
        await settle()
        assert _statuses(claims) == ["websocket.accept"] * 3 + [429] * 2
        assert claims[-1].sent[0]["headers"] == [(b"retry-after", b"1")]
        assert _statuses(fresh) == ["websocket.accept"] * 5
        now += 0.5  # one more a half second later: 2 a second
        later = [Socket(mw, 20 + i, resumes=f"forged-{20 + i}") for i in range(2)]
        await settle()
        assert _statuses(later) == ["websocket.accept", 429]
        assert mw.refused["unheld session"] == 3 and mw.open == 3 + 5 + 1
        for s in [*claims, *fresh, *later]:
            s.close()

    run_async(scenario())


def test_a_session_sending_in_a_loop_is_read_at_its_rate_and_loses_nothing():
    burst, per_s, n = 5, 50.0, 30

    async def scenario():
        mw = limits(burst=burst, per_s=per_s)
        started = time.monotonic()
        flooder = Socket(mw, 0, messages=n)
        learner = Socket(mw, 1, messages=3)
        while len(mw.app.messages) < n + 3:
            await asyncio.sleep(0.01)
        mine = [(m, t - started) for s, m, t in mw.app.messages if s == 0]
        assert [m for m, _ in mine] == [b"%d" % i for i in range(n)]  # every one, in order
        assert mine[burst - 1][1] < 0.05  # the burst at once
        assert mine[-1][1] >= (n - burst) / per_s * 0.9  # then per_s a second
        theirs = [t - started for s, _, t in mw.app.messages if s == 1]
        assert max(theirs) < 0.05  # another session is not slowed by it
        assert n - burst - 2 <= mw.slowed <= n - burst  # the messages past the burst waited
        flooder.close()
        learner.close()

    run_async(scenario())


def test_the_stages_socket_is_read_at_the_sessions_rate_and_holds_no_seat():
    """The Playground's moves without a run (stockdemo/ui/stage_route.py) come on a socket of their
    own: its messages are metered as a session's, and a full replica still lets it in."""
    burst, per_s, n = 4, 40.0, 12

    async def scenario():
        mw = limits(capacity=1, hard_cap=1, burst=burst, per_s=per_s)
        session = Socket(mw, 0)
        await settle()
        started = time.monotonic()
        stage = Socket(mw, 1, messages=n, path=replica_limits.STAGE_SOCKET)
        while len(mw.app.messages) < n:
            await asyncio.sleep(0.01)
        assert mw.open == 1 and stage.sent[0]["type"] == "websocket.accept"  # no seat taken, none refused
        read = [t - started for s, _, t in mw.app.messages if s == 1]
        assert read[burst - 1] < 0.05 and read[-1] >= (n - burst) / per_s * 0.9
        assert mw.slowed >= n - burst - 1
        for s in (session, stage):
            s.close()
            await s.task
        assert mw.open == 0

    run_async(scenario())


@pytest.mark.parametrize("path,page", [
    ("/", True), ("/playground", True), ("/lesson", True),
    ("/static/js/index.DormvYxC.js", False), ("/app/static/graph_view.js", False),
    ("/_stcore/health", False), ("/playground/_stcore/host-config", False), ("/favicon.png", False),
    ("/component/x/index.html", False), ("/media/abc.png", False), (replica_limits.STAGE_SOCKET, False),
])
def test_a_page_load_is_the_apps_html_and_haproxy_counts_the_same(path, page, tmp_path):
    assert is_page_load({"type": "http", "method": "GET", "path": path}) is page
    # HAProxy's not_page rules, as deploy/serve.py writes them into its config.
    from deploy.serve import haproxy_config

    cfg = haproxy_config("127.0.0.1", 8501, [("r1", 9001)], tmp_path / "admin.sock")
    rules = re.findall(r"acl not_page (path_beg|path_sub|path_end) (.+)", cfg)
    assert {kind for kind, _ in rules} == {"path_beg", "path_sub", "path_end"}
    test = {"path_beg": str.startswith, "path_sub": str.__contains__, "path_end": str.endswith}
    not_page = any(test[kind](path, word) for kind, words in rules for word in words.split())
    assert not_page is not page


def test_a_session_that_keeps_its_bucket_low_is_cut_and_its_backlog_never_runs(monkeypatch):
    monkeypatch.setattr(replica_limits, "MAX_LOW_S", 0.3)

    async def scenario():
        mw = limits(burst=10, per_s=20.0)
        flooder = Socket(mw, 0, messages=200)
        await asyncio.wait_for(flooder.task, 5)
        read = [m for s, m, _ in mw.app.messages if s == 0]
        # half the burst before the bucket is low, the rest of it and 0.3 s at 20 a second
        # after, give or take two: never the other ~180
        assert 10 + 0.3 * 20 - 2 <= len(read) <= 10 + 0.3 * 20 + 2, len(read)
        assert mw.app.ended[0]["type"] == "websocket.disconnect" and mw.cut == 1

    run_async(scenario())


def test_a_person_who_pauses_is_held_back_at_most_and_never_cut(monkeypatch):
    monkeypatch.setattr(replica_limits, "MAX_LOW_S", 0.3)

    async def scenario():
        mw = limits(burst=5, per_s=20.0)
        person = Socket(mw, 0)
        for _ in range(4):  # drags of 10 moves, each longer than the burst, and a pause
            for i in range(10):
                person.incoming.put_nowait({"type": "websocket.receive", "bytes": b"%d" % i})
            await asyncio.sleep(0.6)
        assert mw.slowed > 0  # it was held back
        person.close()
        await asyncio.wait_for(person.task, 5)
        assert len(mw.app.messages) == 40 and mw.cut == 0
        assert mw.app.ended[0]["code"] == 1000

    run_async(scenario())


def test_a_session_whose_client_has_gone_ends_without_running_what_it_had_sent():
    async def scenario():
        mw = limits(burst=2, per_s=5.0)
        tab = Socket(mw, 0, messages=50)
        while len(mw.app.messages) < 3:  # the burst, then held back
            await asyncio.sleep(0.01)
        tab.gone = True
        await asyncio.wait_for(tab.task, 2)
        assert len(mw.app.messages) <= 5  # not the 50 it had queued
        assert mw.app.ended[0] == {"type": "websocket.disconnect", "code": 1008}

    run_async(scenario())
