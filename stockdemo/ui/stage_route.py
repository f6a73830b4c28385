"""The stage's moves without a script run: each value a drag crosses, answered on a socket of its own.

A script run, even of the stage's fragment alone, costs a replica Streamlit's own work
(a thread, the session's state, a ``new_session`` message, the run's messages) on top
of the stage's: a lecture moving T at once is hundreds of runs on one core. Where the
server offers it (``deploy/replica_app.py`` serves ``serve`` at the path in
``STOCKDEMO_STAGE_SOCKET``, through ``st.App``'s routes: ``make run`` and ``make serve``),
the stage's browser code sends
the strip's values (``{knob: value, ..., "req": n}``, as the component's ``knobs``
state) on a websocket of its own instead, and gets back the payload the stage's run
would have drawn for them, made from the caches every session shares: one thread of
the replica answers them in turn, and no run starts.

The session catches up once the learner stops (``catch_up``): the run of the panels
under the stage, which the settle starts, takes what was served (the stage's values,
the request answered, what changed, what the stage drew), and writes the URL as after
any drag. Any run of the stage or a "Pin as A" takes it first too.

Offered (``direct_moves``) only where the stage's run would do nothing but draw the
stage: the learner's own stage (not a class's teacher, whose moves go to the class
through the stage's run, nor a following student, who does not move), no replay, no
run A pinned, no node named in the link. Everywhere else, where app.py is served alone
(Streamlit Community Cloud), and when the socket fails, the browser sends its values as the
component's state: a run, as before. The seats and the socket's loop are ``seats``'s, shared
with Your code's runs (``code_route``).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import streamlit as st

from stockdemo import heap, host, i18n
from stockdemo.config import NODE, SEQ_LEN, VIEW, RunConfig
from stockdemo.layout.picture import picture_bytes
from stockdemo.render.payload import HEIGHT, view_json
from stockdemo.ui import compat, hooks, keys, seats
from stockdemo.ui.caches import cached_run, cached_static_payload, keep_run, kept
from stockdemo.ui.compare import drawn_on_stage
from stockdemo.ui.stage import STAGE_KNOBS, checked_value, stage_of_run

# Set by the process that serves the socket (deploy/replica_app.py): its path.
SOCKET_ENV = "STOCKDEMO_STAGE_SOCKET"
MAX_MESSAGE = 1024  # characters: four knobs and a request number
_STAGE_NAMES = frozenset(knob.name for knob in STAGE_KNOBS)


@dataclass
class _Seat:
    """One session's stage, as its last run left it, and what was served since."""

    session_id: str
    base: dict[str, object]  # the run's settings the stage does not draw (batch, features, seed)
    view: str
    present: bool
    redraw: int
    url: str
    previous: dict | None  # caches.change_since's record of the run on the stage
    served: tuple[RunConfig, int] | None = None  # settings and request answered here, not yet taken
    lang: str = i18n.ENGLISH  # the session's language: one thread answers every session's moves


SEATS: seats.Seats[_Seat] = seats.Seats()  # by token: the secret a session's payload hands its browser
# One thread answers every session's moves in turn: the first to ask is the first answered.
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stage-moves")


def direct_moves(config: RunConfig, view: str, *, present: bool, plain: bool) -> str | None:
    """In the stage's run, after its settings are read: the socket's address for this session's
    moves (its token in it), or None when its moves must be runs.

    ``plain``: the run draws nothing but the stage (no replay, no run A, nothing locked).
    """
    path = os.environ.get(SOCKET_ENV)
    session_id = compat.session_id()
    shared = hooks.ask(hooks.MOVES_SHARED)
    if not (path and session_id and plain and not shared and st.query_params.get(NODE.name) is None):
        SEATS.drop(st.session_state.get(keys.STAGE_TOKEN))  # a move on its way is a run's now
        return None
    token = SEATS.token(keys.STAGE_TOKEN)
    seat = _Seat(session_id, {k: v for k, v in config.__dict__.items() if k not in _STAGE_NAMES}, view,
                 present, len(st.session_state.get(keys.STAGE_REDRAWN, ())), f"{path}?s={token}",
                 st.session_state.get(keys.PREVIOUS_RUN), lang=i18n.language())
    SEATS.put(token, seat)
    return seat.url


def catch_up() -> None:
    """Take what the socket served this session since its last run: the stage's values, the
    request answered, what changed since, what the stage drew. First in any run that reads them."""
    token = st.session_state.get(keys.STAGE_TOKEN)
    if token is None:
        return
    with SEATS.lock:
        seat = SEATS.get(token)
        if seat is None or seat.served is None:
            return
        (config, req), seat.served = seat.served, None
        previous, view = seat.previous, seat.view
    if req <= int(st.session_state.get(keys.STAGE_REQ, 0)):
        return  # the browser's own values since, through a run, are newer
    for knob in STAGE_KNOBS:
        st.session_state[keys.STAGE_VALUE.format(knob.name)] = getattr(config, knob.name)
    st.session_state[keys.STAGE_REQ] = req
    st.session_state[keys.PREVIOUS_RUN] = previous
    drawn_on_stage(config, view)



@dataclass(frozen=True)
class _Move:
    token: str
    seat: _Seat
    values: dict[str, object]
    req: int
    config: RunConfig
    started: float


def read_move(token: str, text: str | None) -> _Move | None:
    """One message of the socket: the strip's values (JSON text, from the browser: untrusted), each
    through its knob's parser -> the move; None if it is not one, or the session has no seat here."""
    started = time.perf_counter()
    seat = SEATS.alive(token)
    if seat is None or not text:
        return None
    try:
        sent = json.loads(text[:MAX_MESSAGE])
    except ValueError:
        return None
    req = sent.get("req") if isinstance(sent, dict) else None
    if not isinstance(req, int) or isinstance(req, bool) or not 0 <= req < 2**53:
        return None
    values = {knob.name: checked_value(knob, sent.get(knob.name, knob.default)) for knob in STAGE_KNOBS}
    return _Move(token, seat, values, req, RunConfig(**values, **seat.base), started)


def answer(move: _Move) -> str:
    """The stage's payload for ``move``, as the stage's run would draw it; the seat remembers it."""
    seat, config = move.seat, move.config
    with i18n.speaking(seat.lang):
        picture, change, stage = stage_of_run(config, seat.view, move.values, seat.previous, move.started,
                                              replay=False, present=seat.present, req=move.req,
                                              redraw=seat.redraw, direct=seat.url)
        payload = view_json(picture, None, change["new"], None, HEIGHT, stage, None, fill=True,
                            statics=cached_static_payload)
    with SEATS.lock:
        if SEATS.get(move.token) is seat:
            seat.previous, seat.served = change, (config, move.req)
    return payload


async def serve(websocket: Any) -> None:
    """The socket (a Starlette WebSocket): each message is one move, answered in turn.

    A move whose run is kept for good (``caches.kept``: every T at the defaults) is answered
    at once, on the event loop (a fraction of a millisecond); any other goes to the one thread
    that runs them, in turn. A token without a seat, or a message that is no move, closes the
    socket (``seats.CLOSE_UNKNOWN``): the browser's moves go back to runs.
    """
    loop = asyncio.get_running_loop()

    async def move_to(token: str, text: str | None) -> bool:
        move = read_move(token, text)
        if move is None:
            return False
        if kept(move.config, move.seat.view):
            await websocket.send_text(answer(move))
        else:
            await websocket.send_text(await loop.run_in_executor(_WORKER, answer, move))
        return True

    await seats.serve(websocket, SEATS, move_to)


def warm_stage(budget: int | None = None) -> int:
    """Run every T at the Playground's default settings and keep it, with its picture and the
    payload's part it makes: a lecture's first "everyone drag T" finds each value ready. Once
    per replica, at its start, in a thread of its own (deploy/replica_app.py). -> runs kept.

    Shortest first, within ``budget`` bytes (the host's cache budget, host.cache_budget():
    all 200 at the defaults hold about 58 MB, which a 690 MiB host cannot spare).
    """
    budget = host.cache_budget() if budget is None else budget
    held = 0
    seq_lens = range(SEQ_LEN.low, SEQ_LEN.high + 1, SEQ_LEN.step)
    for count, seq_len in enumerate(seq_lens, 1):
        config = RunConfig(seq_len=seq_len)
        picture = keep_run(config, VIEW.default)
        cached_static_payload(picture)
        held += picture_bytes(picture) + heap.size_of(cached_run(config))
        if held >= budget:
            return count
    return len(seq_lens)
