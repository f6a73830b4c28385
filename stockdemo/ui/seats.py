"""A page's socket of its own: the seats its sessions hold there, and the loop that answers it.

A page whose browser code asks the server for something without a script run (the
Playground's moves, ``stage_route``; Your code's runs, ``code_route``) hands its browser
an address with a secret token; the token names a seat, the session's state as its last
run left it, which the socket's answers read. A seat is dropped when its session ends.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import streamlit as st
from starlette.websockets import WebSocketDisconnect

from stockdemo.ui import compat

PRUNE_EVERY_S = 10.0  # seats of sessions gone are dropped at most this often
CLOSE_UNKNOWN = 4404  # the code a socket is closed with when its token or a message is no good

S = TypeVar("S")


class Seats(Generic[S]):
    """The seats of one socket, by token; each seat has a ``session_id``."""

    def __init__(self) -> None:
        self._seats: dict[str, S] = {}
        self.lock = threading.RLock()  # get() inside a "with lock" that reads then writes a seat
        self._pruned_at = 0.0

    def token(self, key: str) -> str:
        """This session's token under the session state's ``key`` (made the first time)."""
        if st.session_state.get(key) is None:
            st.session_state[key] = secrets.token_urlsafe(18)
        return st.session_state[key]

    def put(self, token: str, seat: S) -> None:
        with self.lock:
            self._seats[token] = seat
        self.prune()

    def get(self, token: str) -> S | None:
        with self.lock:
            return self._seats.get(token)

    def drop(self, token: str | None) -> None:
        if token is not None:
            with self.lock:
                self._seats.pop(token, None)

    def alive(self, token: str) -> S | None:
        """The seat named by ``token`` while its session is connected, else None."""
        seat = self.get(token)
        return seat if seat is not None and compat.alive()(seat.session_id) else None

    def prune(self) -> None:
        """Drop the seats of sessions that have ended (at most every PRUNE_EVERY_S)."""
        now = time.monotonic()
        if now - self._pruned_at < PRUNE_EVERY_S:
            return
        self._pruned_at = now
        alive = compat.alive()
        with self.lock:
            for token in [t for t, seat in self._seats.items() if not alive(seat.session_id)]:
                del self._seats[token]


async def serve(websocket: Any, seats: Seats, answer: Callable[[str, str | None], Awaitable[bool]]) -> None:
    """A socket (a Starlette WebSocket) whose messages ``answer(token, text)`` takes in turn.

    A token without a seat closes it (code CLOSE_UNKNOWN) before it is accepted, and so does a
    message ``answer`` refuses (False): the browser goes back to asking through script runs.
    """
    token = websocket.query_params.get("s", "")
    if seats.get(token) is None:
        await websocket.close(code=CLOSE_UNKNOWN)
        return
    await websocket.accept()
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if not await answer(token, message.get("text")):
                await websocket.close(code=CLOSE_UNKNOWN)
                return
    except (OSError, RuntimeError, WebSocketDisconnect):
        return  # the browser went; its session catches up, or ends, on its own
