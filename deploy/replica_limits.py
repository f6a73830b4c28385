"""What one replica lets in: its seats (the sessions it holds) and each session's message rate.

An ASGI middleware in front of Streamlit (``deploy/replica_app.py`` passes it to
``st.App``, Streamlit's public API for middleware). It sees every HTTP request and every
websocket, and Streamlit opens one websocket per session (``/_stcore/stream``),
whose every message from the browser (a BackMsg: a widget moved, a rerun asked) is
one ASGI ``websocket.receive`` event. It needs nothing of Streamlit's own.

- **Seats.** A page load (the app's HTML) while the replica holds ``capacity``
  sessions (open websockets) gets the "class is full" page (503, ``Retry-After``,
  and the page retries by itself). A browser that already had the app (it
  carries Streamlit's XSRF cookie: a reload, a second tab) is let in up to
  ``hard_cap``, and so is a websocket: past it, 503 before the upgrade, and the
  browser's own reconnection tries again. The headroom is for a replica that
  dies (its sessions reconnect to the others) and for the pages loaded while a
  replica filled up, whose websockets come a moment later. A page load holds no
  seat: a client loading pages in a loop would fill the class with nobody.
- **Returning sessions.** A browser that lost its connection names the session it had
  when it reconnects (the third subprotocol, ``streamlit, <xsrf>, <session id>``);
  Streamlit then resumes it, which costs a rerun, not a new session. The balancer
  lets such reconnects through at a lecture's pace, and anyone can name a session,
  so here each is judged by what it names (``held``: whether this server holds it):
  a session it holds comes back at once, but at most ``RESUMES`` times in
  ``RESUME_WINDOW_S`` (a browser comes back once per blip; a loop does not); one it
  does not hold would be a new session, and such claims get a bucket of their own
  for the whole replica (``unheld``): past it, 429 before the upgrade, and the
  browser tries again.
- **Messages.** Each websocket gets a token bucket: ``burst`` messages at once,
  then ``per_s`` a second. A message past it is read later, not dropped: the
  server stops reading that socket (uvicorn pauses a socket until the app
  reads), so a session sending in a loop waits on its own socket and costs at
  most ``per_s`` runs a second. A session whose bucket stays under half full
  for ``MAX_LOW_S`` is not a person (a person stops between drags, and the
  bucket fills again; a burst of clicks fits it): it is disconnected, and
  what it had queued in the sockets' buffers, thousands of messages, is never
  run. Nor is it once its client has gone. The stage's own socket (``STAGE_SOCKET``: the
  moves a Playground answers without a run, ``stockdemo/ui/stage_route.py``) and Your
  code's (``CODE_SOCKET``: its runs, ``stockdemo/ui/code_route.py``) are metered the same
  way, and hold no seat: their session holds one already.
"""

from __future__ import annotations

import asyncio
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

PAGE = Path(__file__).with_name("busy.html")
STREAM_PATH = "/_stcore/stream"
STAGE_SOCKET = "/_stockdemo/stage"  # served by deploy/replica_app.py
CODE_SOCKET = "/_stockdemo/code"  # likewise: Your code's runs (stockdemo/ui/code_route.py)
MAX_LOW_S = 30.0
RESUMES = 3  # a session's reconnects let in within RESUME_WINDOW_S
RESUME_WINDOW_S = 10.0
DISCONNECT = {"type": "websocket.disconnect", "code": 1008}
XSRF_COOKIE = b"_streamlit_xsrf"
# What the browser fetches besides the page itself (and Streamlit's calls, under /_stcore/);
# deploy/serve.py gives HAProxy the same lists.
NOT_PAGES = ("/static/", "/app/static/", "/component/", "/media/", "/_stockdemo/")
NOT_PAGE_ENDINGS = (".js", ".css", ".png", ".ico", ".json", ".svg", ".woff", ".woff2", ".ttf", ".map")


def is_page_load(scope: dict) -> bool:
    """A GET of the app's HTML: any path but Streamlit's endpoints and files (the same rule as HAProxy's)."""
    path = scope.get("path", "")
    return (scope.get("method") == "GET" and "/_stcore/" not in path
            and not path.startswith(NOT_PAGES) and not path.endswith(NOT_PAGE_ENDINGS))


def named_session(scope: dict) -> str:
    """The session a websocket asks to resume (Streamlit's frontend names it as its third
    subprotocol when it reconnects); "" for a session's first websocket."""
    protocols = scope.get("subprotocols") or []
    return protocols[2].strip() if len(protocols) > 2 else ""


def busy_page(heading: str, message: str, retry_s: int) -> str:
    """deploy/busy.html with its words and retry filled in (HAProxy sends it too, from serve.py)."""
    return string.Template(PAGE.read_text()).substitute(heading=heading, message=message, retry=retry_s)


class MessageRate:
    """A token bucket: ``burst`` messages at once, then ``per_s`` a second."""

    def __init__(self, burst: float, per_s: float) -> None:
        self.burst, self.per_s = burst, per_s
        self.tokens, self.at = burst, time.monotonic()

    def wait(self) -> float:
        """Seconds before the next message may be read (0: now); the message's token is taken."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.per_s)
        self.at = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens / self.per_s

    def take(self) -> bool:
        """One token if there is one now (nothing is taken otherwise)."""
        if self.wait() == 0.0:
            return True
        self.tokens += 1
        return False


class ReplicaLimits:
    """ASGI middleware: seats by ``capacity`` and ``hard_cap``, messages by ``burst`` and ``per_s``.

    ``retry_s``: what the full page tells the browser to wait (each answer adds up to
    half of it at random, so a full class's browsers do not all come back at once).
    ``affinity_cookie``: the balancer's cookie, expired on the full page so that its
    retry may go to another replica (HAProxy's ``cookie ... preserve`` passes it on).
    ``held``: whether this server holds a session, by id (none, if not told);
    ``unheld``: (burst, per second) of the websockets naming a session it does not hold.
    """

    def __init__(self, app, *, capacity: int, hard_cap: int, burst: float, per_s: float,
                 retry_s: int = 30, affinity_cookie: str = "SRV",
                 held: Callable[[str], bool] = lambda session_id: False,
                 unheld: tuple[float, float] = (30, 10)) -> None:
        self.app = app
        self.capacity, self.hard_cap = capacity, max(capacity, hard_cap)
        self.burst, self.per_s = burst, per_s
        self.retry_s = retry_s
        self.affinity_cookie = affinity_cookie
        self.held = held
        self.unheld = MessageRate(*unheld)
        self.resumed: dict[str, list[float]] = {}  # session id -> when it came back, in the window
        self.open = 0  # sessions: Streamlit's websockets
        self.refused = {"full page": 0, "websocket": 0, "resumed too often": 0, "unheld session": 0}
        self.slowed = 0  # messages that waited for their bucket
        self.cut = 0  # sessions disconnected for sending far past it
        self._said = 0.0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket" and scope["path"].endswith(STREAM_PATH):
            await self._session(scope, receive, send)
        elif scope["type"] == "websocket" and scope["path"] in (STAGE_SOCKET, CODE_SOCKET):
            await self._metered(scope, receive, send)
        elif scope["type"] == "http" and is_page_load(scope):
            returning = any(k == b"cookie" and XSRF_COOKIE in v for k, v in scope["headers"])
            if self.open >= (self.hard_cap if returning else self.capacity):
                await self._full_page(send)
                return
            await self.app(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _session(self, scope, receive, send) -> None:
        refusal = (503, self.retry_s, "websocket") if self.open >= self.hard_cap else self._returning(scope)
        if refusal is not None:
            status, retry_s, why = refusal
            self._refuse(why)
            await receive()  # websocket.connect
            if "websocket.http.response" in scope.get("extensions", {}):
                await send({"type": "websocket.http.response.start", "status": status,
                            "headers": [(b"retry-after", str(retry_s).encode())]})
                await send({"type": "websocket.http.response.body", "body": why.encode()})
            else:
                await send({"type": "websocket.close", "code": 1013})  # 1013: try again later
            return
        self.open += 1
        try:
            await self._metered(scope, receive, send)
        finally:
            self.open -= 1

    def _returning(self, scope) -> tuple[int, int, str] | None:
        """A websocket that names a session: None to let it in, else (status, retry after, why)."""
        session_id = named_session(scope)
        if not session_id:
            return None
        if not self.held(session_id):
            return None if self.unheld.take() else (429, 1, "unheld session")
        now = time.monotonic()
        if len(self.resumed) > 4 * self.hard_cap:  # forget the sessions whose window has passed
            self.resumed = {k: v for k, v in self.resumed.items() if now - v[-1] < RESUME_WINDOW_S}
        times = [t for t in self.resumed.get(session_id, []) if now - t < RESUME_WINDOW_S]
        if len(times) >= RESUMES:
            return 429, int(RESUME_WINDOW_S), "resumed too often"
        self.resumed[session_id] = [*times, now]
        return None

    async def _metered(self, scope, receive, send) -> None:
        """The app behind a websocket whose messages are read at most at the bucket's rate."""
        bucket = MessageRate(self.burst, self.per_s)
        low_since: float | None = None  # since when the bucket has stayed under half full
        gone = asyncio.Event()

        async def sent(message) -> None:
            # A send to a client that has gone ends the session through its next read, as a
            # browser leaving does (Streamlit's own path: the error here would leave its
            # read loop a socket it takes for never accepted, and a traceback in the log).
            if not gone.is_set():
                try:
                    await send(message)
                except OSError:
                    gone.set()

        async def metered():
            nonlocal low_since
            if gone.is_set():
                return DISCONNECT  # Streamlit takes it as the browser gone and ends the session
            message = await receive()
            if message["type"] != "websocket.receive":
                return message
            wait = bucket.wait()
            now = time.monotonic()
            if bucket.tokens >= bucket.burst / 2:
                low_since = None
            elif low_since is None:
                low_since = now
            elif now - low_since > MAX_LOW_S:
                self.cut += 1
                self._say(f"a session kept its message bucket under half full for {MAX_LOW_S:g} s: "
                          f"disconnected ({self.cut} so far)")
                return DISCONNECT
            if wait == 0:
                return message
            if not self.slowed:
                self._say(f"a session sent messages faster than {self.per_s:g} a second "
                          f"after a burst of {self.burst:g}: read at that rate")
            self.slowed += 1
            try:
                await asyncio.wait_for(gone.wait(), wait)
                return DISCONNECT
            except TimeoutError:
                return message

        await self.app(scope, metered, sent)

    async def _full_page(self, send) -> None:
        self._refuse("full page")
        retry = self.retry_s + random.randint(0, self.retry_s // 2)
        body = busy_page("The class is full",
                         "This server holds as many learners as it can serve well right now.",
                         retry).encode()
        await send({"type": "http.response.start", "status": 503, "headers": [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(retry).encode()),
            (b"cache-control", b"no-store"),
            (b"set-cookie", f"{self.affinity_cookie}=; Max-Age=0; Path=/".encode())]})
        await send({"type": "http.response.body", "body": body})

    def _refuse(self, what: str) -> None:
        self.refused[what] += 1
        self._say(f"{self.open} sessions open (capacity {self.capacity}, {self.hard_cap} at most): "
                  f"refused so far {self.refused}")

    def _say(self, line: str) -> None:
        """One line to the replica's log, at most every 10 s: a full class must not flood the terminal."""
        now = time.monotonic()
        if now - self._said >= 10.0:
            self._said = now
            print(f"replica limits: {line}", file=sys.stderr, flush=True)
