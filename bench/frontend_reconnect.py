"""How Streamlit 1.67's frontend comes back after a lost connection, mirrored for the benches
(``WebsocketConnection`` in static/static/js/index.*.js).

Before reconnect attempt n it waits ``reconnect_delay(n)`` (n=1: 250-500 ms; then uniform
in [cap/2, cap), cap = min(4 s, 0.5 s x 2^(n-1)); the count starts again once connected).
Then it pings: ``/_stcore/health`` and ``/_stcore/host-config`` together with its cookies,
again after ``ping_delay`` (100 ms, then min(4 s, 100 ms x 2^(k-1)) x 0.7-1.0) until both
answer 200; the 6th failed ping puts up the "Connection error" dialog. Then the websocket,
with the same cookies and the subprotocols ``streamlit, <xsrf token>, <the session id>``,
15 s to open; any refusal or reset is the next attempt.
"""

from __future__ import annotations

import asyncio
import random
import time

WS_OPEN_TIMEOUT_S = 15.0  # the frontend's WebSocket timeout (60 s on Android)
PING_TIMEOUT_S = 15.0  # each ping request's
PING_CAP_S = 4.0
PING_DIALOG_AFTER = 6  # failed pings before the frontend shows its connection-error dialog


def reconnect_delay(attempt: int, rng: random.Random) -> float:
    """The frontend's wait before reconnect attempt ``attempt`` (1, 2, ...), seconds."""
    cap = min(4.0, 0.5 * 2 ** (attempt - 1))
    floor = 0.25 if attempt == 1 else cap / 2
    return rng.uniform(floor, cap)


def ping_delay(tries: int, rng: random.Random) -> float:
    """The frontend's wait after failed ping ``tries`` (1, 2, ...), seconds."""
    wait = min(PING_CAP_S, 0.1 * 2 ** (tries - 1))
    return wait if tries == 1 else wait * rng.uniform(0.7, 1.0)


async def http_status(base: str, path: str, cookies: dict[str, str]) -> str:
    """GET ``path`` as the browser's fetch, with its cookies -> the status ("200"), or the error's name.

    Plain asyncio: 300 learners pinging at once would queue on a thread pool's few threads.
    """
    host, port = base.removeprefix("http://").split(":")
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), PING_TIMEOUT_S)
        try:
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {cookie}\r\n"
                         f"Connection: close\r\n\r\n".encode())
            status = await asyncio.wait_for(reader.readline(), PING_TIMEOUT_S)
            await asyncio.wait_for(reader.read(), PING_TIMEOUT_S)
        finally:
            writer.close()
        return status.split()[1].decode() if status.split()[1:] else "empty"
    except (OSError, TimeoutError) as err:
        return type(err).__name__


async def ping(base: str, cookies: dict[str, str], deadline: float,
               rng: random.Random) -> list[str] | None:
    """The ping before a websocket -> the failed pings' statuses, None past ``deadline`` (monotonic)."""
    refused: list[str] = []
    while time.monotonic() < deadline:
        health, config = await asyncio.gather(http_status(base, "/_stcore/health", cookies),
                                              http_status(base, "/_stcore/host-config", cookies))
        if health == config == "200":
            return refused
        refused.append(health if health != "200" else config)
        await asyncio.sleep(ping_delay(len(refused), rng))
    return None
