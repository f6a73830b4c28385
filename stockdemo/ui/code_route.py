"""Your code's Run without a script run: the code on a socket of its own, the graph's payload back.

A Run through Streamlit is a script run of the page's fragment: its start, a dozen
messages each drawn by the browser's React while the learner's code runs beside them on
the same two cores, then the graph's payload. Where the server offers it
(``deploy/replica_app.py`` serves ``serve`` at the path in ``STOCKDEMO_CODE_SOCKET``,
as ``make run`` and ``make serve`` do), the editor sends ``{"code", "n"}`` on a socket of
its own instead, and gets back, once the sandbox has run the code (``cached_code_run``:
once per text for every session, as any run), the graph view's payload for it, made as
the page's run would make it from the session's seat (``code_view``): the view draws it
at once (the window event ``stockdemo:served``). The editor then hands the same Run to
the page as before (its trigger ``run``), a frame later: the page's run finds the run
and its picture cached, takes the code as the tab's (its link, the printed text, the
error's line), and sends the view the same picture, which it leaves as drawn.

The answer is one JSON object: ``n``, and ``view`` (the payload, or null when the run made
no graph: the editor asks the page, which shows the error) and ``status`` (the words beside
Run), or, while the run waits in the sandbox's queue past ``QUEUE_NOTE_S``, ``queued``
(where it stands, in words). Offered only outside a class (a class hears a student's Run
in the page's run), with no replay on and no run A beside it, and only after a run that
drew a graph; everywhere else, and when the socket fails, a Run is the page's run.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from stockdemo import i18n
from stockdemo.render.payload import HEIGHT, view_json
from stockdemo.sandbox import Limits, shared_pool
from stockdemo.ui import compat, hooks, keys, seats
from stockdemo.ui.caches import cached_code_picture, cached_code_run, cached_static_payload
from stockdemo.ui.code_view import QUEUE_NOTE_S, code_stage, new_ids, queue_words, status
from stockdemo.ui.url_sync import selected_from_url

# Set by the process that serves the socket (deploy/replica_app.py): its path.
SOCKET_ENV = "STOCKDEMO_CODE_SOCKET"
MAX_CODE = Limits.code_chars  # longer code is the page's to refuse, in the sandbox's words
MAX_MESSAGE = 6 * MAX_CODE + 64  # characters: the code as JSON (every one escaped) and a number
_workers: ThreadPoolExecutor | None = None


@dataclass
class _Seat:
    """One session's Your code, as its last run of the page left it."""

    session_id: str
    lang: str
    present: bool
    previous: np.ndarray | None  # the graph on screen's ids, hashed (code_view.new_ids)
    film: tuple[str, int]  # (the code whose film the stepper is on, the graph picked)
    unroll: tuple[str, frozenset[str]]  # (the code, its folds drawn unrolled)
    selected: list[str]  # the node the learner selected, if any
    req: int  # the stepper's request answered, and the stage watch's redraws
    redraw: int


SEATS: seats.Seats[_Seat] = seats.Seats()


def offered() -> bool:
    """Whether this page's run may hand its editor the socket: the server serves one, and the
    tab is in no class."""
    return bool(os.environ.get(SOCKET_ENV) and compat.session_id() and not hooks.ask(hooks.IN_CLASS))


def seat(view_key: str, present: bool) -> str:
    """At the end of the page's run that drew the graph: this session's seat, as the run left its
    state (``view_key``: the graph view's key) -> the socket's address for the editor."""
    token = SEATS.token(keys.CODE_TOKEN)
    film_of = st.session_state.get(keys.CODE_FILM_OF, "")
    frame = st.session_state.get(keys.CODE_FRAME, -1)
    source, unroll, _ = st.session_state.get(keys.CODE_UNROLL) or ("", frozenset(), frozenset())
    chosen = getattr(st.session_state.get(view_key), "selected", None)
    SEATS.put(token, _Seat(compat.session_id(), i18n.language(), present,
                           st.session_state.get(keys.CODE_PREVIOUS), (film_of, frame), (source, unroll),
                           [chosen] if chosen else [],
                           int(st.session_state.get(keys.STAGE_REQ, 0)),
                           len(st.session_state.get(keys.STAGE_REDRAWN, ()))))
    return f"{os.environ[SOCKET_ENV]}?s={token}"


def unseat() -> None:
    """This session's Runs go through the page's run (a class, a replay, no graph on screen)."""
    SEATS.drop(st.session_state.get(keys.CODE_TOKEN))


@dataclass(frozen=True)
class _Request:
    token: str
    seat: _Seat
    code: str
    n: int


def read_request(token: str, text: str | None) -> _Request | None:
    """One message of the socket (JSON text, from the browser: untrusted) -> the Run it asks
    for; None if it is not one, or the session has no seat here."""
    seat = SEATS.alive(token)
    if seat is None or not text or len(text) > MAX_MESSAGE:
        return None
    try:
        sent = json.loads(text)
    except ValueError:
        return None
    code, n = (sent.get("code"), sent.get("n")) if isinstance(sent, dict) else (None, None)
    if not isinstance(code, str) or not isinstance(n, int) or isinstance(n, bool) or not 0 < n < 2**53:
        return None
    return _Request(token, seat, code, n)


def answer(request: _Request, say: Any = None) -> str:
    """The answer to ``request`` (module docstring), made as the page's run would draw the run;
    the seat then holds its graph as the one on screen. ``say(text)`` sends a note meanwhile."""
    seat, code, n = request.seat, request.code, request.n
    if len(code) > MAX_CODE:
        return json.dumps({"n": n, "view": None})
    with i18n.speaking(seat.lang):
        waited = _queue_note(n, say)
        run = cached_code_run(code, who=seat.session_id, on_wait=waited)
        if not run.film:
            return json.dumps({"n": n, "view": None})
        frame = seat.film[1] if seat.film[0] == code else len(run.film) - 1
        unroll = seat.unroll[1] if seat.unroll[0] == code else frozenset()
        picture, trace = cached_code_picture(code, unroll, frame)
        ringed, kept = new_ids(picture.graph, seat.previous)
        stage, _ = code_stage(run, frame, picture, replay=None if trace is None else False,
                              present=seat.present, ran=n, served=True, req=seat.req, redraw=seat.redraw)
        selected = selected_from_url(picture, seat.selected)[0]
        payload = view_json(picture, None, ringed, selected, HEIGHT, stage, None, fill=True,
                            statics=cached_static_payload)
        said = status(run)
    with SEATS.lock:
        if SEATS.get(request.token) is seat:
            seat.previous, seat.film = kept, (code, frame)
    return f'{{"n": {n}, "status": {json.dumps(said)}, "view": {payload}}}'


def _queue_note(n: int, say: Any) -> Any:
    """The sandbox's ``on_wait`` for a Run on the socket: past QUEUE_NOTE_S, where it stands."""
    if say is None:
        return None
    sent = time.monotonic()

    def waiting(ahead: int) -> None:
        if time.monotonic() - sent >= QUEUE_NOTE_S:
            say(json.dumps({"n": n, "queued": queue_words(ahead)}))
    return waiting


def _runs() -> ThreadPoolExecutor:
    """The threads Runs wait in: one for each run the sandbox holds at once (its places, one per
    core, and its queue), so every Run waits in the sandbox's queue, fair between sessions, not
    in this pool's. Threads made as Runs come; a waiting one holds no memory of its own to speak of."""
    global _workers
    if _workers is None:
        pool = shared_pool()
        _workers = ThreadPoolExecutor(pool.slots + pool.max_waiting, thread_name_prefix="code-runs")
    return _workers


async def serve(websocket: Any) -> None:
    """The socket (a Starlette WebSocket): each message is one Run, answered in turn on a thread
    of its own (its wait is the sandbox's). A token without a seat, or a message that is no Run,
    closes it (``seats.CLOSE_UNKNOWN``): the editor's Runs go back to the page's runs."""
    loop = asyncio.get_running_loop()

    def say(text: str) -> None:
        asyncio.run_coroutine_threadsafe(websocket.send_text(text), loop)

    async def run(token: str, text: str | None) -> bool:
        request = read_request(token, text)
        if request is None:
            return False
        await websocket.send_text(await loop.run_in_executor(_runs(), answer, request, say))
        return True

    await seats.serve(websocket, SEATS, run)
