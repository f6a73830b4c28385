"""make serve's per-address limits, for real: a lecture hall behind one address passes, a flood does not.

deploy/serve.py as ``make serve`` starts it (two replicas, HAProxy with
deploy/haproxy.cfg's default limits, redis). A lecture of 300 learners behind
one campus NAT (127.0.0.2) opens the app within 20 s, three times as fast as
"within a minute": each browser loads the page, makes its first health check
and opens its websocket, and keeps it. Then one client at another address
(127.0.0.3) floods page loads and websocket opens as fast as it can.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import threading
import time

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from harness.helpers import run_async
from harness.servers import Target
from harness.sessions import SourceSession

LECTURE, FLOODER = "127.0.0.2", "127.0.0.3"
LEARNERS, ARRIVAL_S = 300, 20.0


def page_loads(base: str, source: str, n: int, threads: int = 8, forwarded_for: str = "") -> dict:
    """``n`` GETs of the app's pages from ``source`` on keep-alive connections, as fast as they go
    -> count by status, the first 429's page, the slowest answer's seconds."""
    host, port = base.removeprefix("http://").split(":")
    counts: dict[int, int] = {}
    pages: list[bytes] = []
    lock = threading.Lock()
    left = [n]

    def worker() -> None:
        conn = None
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            if conn is None:
                conn = http.client.HTTPConnection(host, int(port), timeout=30, source_address=(source, 0))
            started = time.monotonic()
            conn.request("GET", "/playground",
                         headers={"X-Forwarded-For": forwarded_for} if forwarded_for else {})
            r = conn.getresponse()
            body = r.read()
            with lock:
                counts[r.status] = counts.get(r.status, 0) + 1
                counts["slowest"] = max(counts.get("slowest", 0.0), time.monotonic() - started)
                if r.status == 429 and not pages:
                    pages.append(body)
                    assert r.getheader("Retry-After") == "10"
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    counts["page"] = pages[0] if pages else b""
    return counts


def test_a_lecture_of_300_behind_one_address_opens_the_app_and_a_flood_at_another_is_refused(served):
    async def lecture() -> list[SourceSession]:
        learners = [SourceSession(served.url, "playground", 60, source=LECTURE) for _ in range(LEARNERS)]

        async def arrive(i: int, s: SourceSession) -> None:
            await asyncio.sleep(i * ARRIVAL_S / LEARNERS)
            await s.open()  # the page, its first health check, its websocket

        results = await asyncio.gather(*(arrive(i, s) for i, s in enumerate(learners)),
                                       return_exceptions=True)
        failed = [repr(r) for r in results if isinstance(r, BaseException)]
        assert failed == [], f"{len(failed)} of {LEARNERS} learners refused or failed: {failed[:5]}"
        return learners

    async def flood_websockets(n: int) -> dict[object, int]:
        ws_url = served.url.replace("http://", "ws://") + "/_stcore/stream"
        out: dict[object, int] = {}
        held = []

        async def one() -> None:
            try:
                held.append(await connect(ws_url, subprotocols=["streamlit"], origin=served.url,
                                          local_addr=(FLOODER, 0),
                                          ping_interval=None, open_timeout=30))
                key: object = 101
            except InvalidStatus as err:
                key = err.response.status_code
            out[key] = out.get(key, 0) + 1

        await asyncio.gather(*(one() for _ in range(n)))
        await asyncio.gather(*(ws.close() for ws in held))
        return out

    async def scenario() -> None:
        learners = await lecture()
        assert len({s.replica for s in learners}) == 2  # spread over both replicas
        pages = await asyncio.to_thread(page_loads, served.url, FLOODER, 700)
        # Page loads count 400 in 10 s: the rest get the page that retries by itself, at once.
        assert 300 <= pages.get(200, 0) <= 440 and pages.get(429, 0) >= 260, pages
        assert b'http-equiv="refresh" content="10"' in pages["page"]
        assert pages["slowest"] < 4, pages
        # Past twice the rate the client is not waiting as told: each answer is held 5 s.
        more = await asyncio.to_thread(page_loads, served.url, FLOODER, 160, 32)
        assert more.get(429) == 160 and more["slowest"] >= 4.5, more
        sockets = await flood_websockets(400)
        # New websockets count 200 in 10 s; the rest 429 before reaching a replica.
        assert 150 <= sockets.get(101, 0) <= 220 and sockets.get(429, 0) >= 180, sockets
        print(f"flood of 700 then 160 page loads: {pages.get(200, 0)} pages, {pages.get(429, 0)} 429s "
              f"answered at once, then the slowest of 160 held {more['slowest']:.1f} s; "
              f"of 400 websockets: {sockets.get(101, 0)} opened, {sockets.get(429, 0)} 429s")
        # Meanwhile the lecture's address is untouched: one more learner gets in.
        late = SourceSession(served.url, "playground", 60, source=LECTURE)
        await late.open()
        assert (await late.run()).ok
        await asyncio.gather(*(s.close() for s in [*learners, late]))

    started = time.monotonic()
    run_async(scenario())
    print(f"lecture and floods: {time.monotonic() - started:.0f} s")


def test_behind_another_proxy_the_limits_count_the_address_it_forwarded():
    """``--client-address forwarded``: every request comes from the proxy's one address, and
    the page-load rate (400 in 10 s) is each forwarded client's, not the proxy's."""
    target = Target("serve", replicas=1, options=("--client-address", "forwarded"))
    try:
        target.wait_ready()
        two_clients = [page_loads(target.url, LECTURE, 300, forwarded_for=f"198.51.100.{i}, 10.0.0.{i}")
                       for i in (1, 2)]
        assert [c.get(200) for c in two_clients] == [300, 300], two_clients  # 600 from one proxy
        one_more = page_loads(target.url, LECTURE, 200, forwarded_for="198.51.100.9, 10.0.0.2")
        # the last address is the one the proxy appended: 10.0.0.2 has had 300 already
        assert 80 <= one_more.get(200, 0) <= 140 and one_more.get(429, 0) >= 60, one_more
    finally:
        target.stop()
        os.unlink(target.log.name)
