"""A lecture of 300 behind one address loses its network for a moment: how long until all are back.

    python bench/reconnect_storm.py [--learners 300] [--open-rate 5] [--rounds 3] [--give-up 120]
                                    [--client-limits on|off]

Starts ``deploy/serve.py`` (``make serve``: two replicas behind HAProxy with
deploy/haproxy.cfg's default limits, and redis) on free loopback ports, as
bench/flood.py does (``harness.servers.Target``). Every connection comes from
127.0.0.1, the lecture's one NAT address. Each round:

1. **The lecture opens**: ``--learners`` Playground sessions, ``--open-rate`` a
   second (5: 300 in a minute, the opening the limits are sized for; at most 50
   of each kind in 10 s, far under them). Each is a real Streamlit session: the
   page loaded (cookie SRV kept), its first health check (XSRF cookie), the
   websocket, the first run finished, then T moved on the stage to a value of
   its own (a run, ``use_stage_socket = False``, so the value lives in the
   browser's widget state, as the stage's state, and a reconnect sends it back).
2. **The blip**, after 12 s of quiet (the 10 s rates back to a lecture's): every
   websocket is cut (the TCP connection aborted, no close frame), each at a
   random moment in 1.5 s, so the first reconnects land within 2 s.
3. **The reconnects**, each as Streamlit 1.67's frontend does them
   (``WebsocketConnection`` in static/static/js/index.*.js; mirrored below in
   ``reconnect_delay`` and ``ping``): wait the backoff of attempt n
   (n=1: 250-500 ms; then uniform in [cap/2, cap), cap = min(4 s, 0.5 s x 2^(n-1)):
   0.5-1, 1-2, 2-4, 2-4 s ...; the count resets once connected), then ping the
   address it was connected at: ``/_stcore/health`` and ``/_stcore/host-config``
   together, with its cookies, retried after 100 ms, then min(4 s, 100 ms x 2^(k-1))
   x 0.7-1.0 until both answer 200 (the 6th failed ping puts up the "Connection
   error" dialog); then the websocket, with the same cookies and the subprotocols
   ``streamlit, <xsrf token>, <the last session id>`` (Streamlit resumes that
   session if the replica still holds it), 15 s to open. Any refusal or reset is
   the next attempt. Once it is open the rerun is sent with the widget states the
   browser holds: the frontend asks for one when the page's last run was a
   fragment's (here the stage's move; through ``make serve``, the settle after
   one) or a run was under way or a fragment has a timer.

A learner is **back** when its websocket is open and that rerun finished
showing the same page with its own T; a learner back stays watched, and one cut
again (HAProxy shuts a replica's sessions when it marks it down) comes back
again. **Lost**: not back ``--give-up`` seconds after its last cut. A round ends
once everyone is back or lost and 10 s passed with nobody cut again (at most
2 x ``--give-up`` + 60 s). Per round: how many came back, when the last one did
(seconds from the first cut), each learner's time out (cut to back), what the
attempts got (429 at once, 429 held by HAProxy's tarpit, 503, resets), pings
refused, sessions resumed against new ones, replicas HAProxy marked down meanwhile
(serve.py's log), the servers' CPU and the load average. Over the rounds: the
median of the time to the last one back. Exit 1 when one is lost.

Everything runs on this machine's loopback; the client shares the 2 cores with the
servers, so the times are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus  # noqa: E402

from harness import (
    measures,  # noqa: E402
    servers,  # noqa: E402
    sessions,  # noqa: E402  the session client
)

LECTURE = "127.0.0.1"
COOL_S = 12.0  # quiet before the blip and between rounds: the limits count over 10 s
CUT_SPREAD_S = 1.5  # the cuts' spread: with the first backoff (<= 0.5 s) every first try is within 2 s
WS_OPEN_TIMEOUT_S = 15.0  # the frontend's WebSocket timeout (60 s on Android)
PING_TIMEOUT_S = 15.0  # each ping request's
PING_CAP_S = 4.0
PING_DIALOG_AFTER = 6  # failed pings before the frontend shows its connection-error dialog
HELD_S = 4.5  # a refusal this slow was held by HAProxy's tarpit (5 s)
STABLE_S = 10.0  # everyone back this long (none cut again) ends a round


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


class _Tap:
    """A websocket, with the session id of the first ``new_session`` read through it noted."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.session_id = ""

    async def send(self, data: bytes) -> None:
        await self.ws.send(data)

    async def recv(self) -> bytes:
        data = await self.ws.recv()
        if not self.session_id:
            msg = ForwardMsg()
            msg.ParseFromString(data)
            if msg.WhichOneof("type") == "new_session":
                self.session_id = msg.new_session.initialize.session_id
        return data


@dataclass
class Attempt:
    at: float  # seconds after the learner's cut, its ping sent
    outcome: str  # "open", "429", "429 held", "503", an error's name, "closed before its run"
    seconds: float  # the attempt's own time (websocket opening)
    pings_refused: list[str] = field(default_factory=list)  # statuses of the failed pings before it
    ping_s: float = 0.0  # the pings' time, failed ones and their waits included


class Learner(sessions.Session):
    """A browser tab on the Playground that reconnects as Streamlit's frontend does."""

    use_stage_socket = False  # a move is a run: its value is in the widget state the browser keeps

    def __init__(self, base: str, index: int, run_timeout: float) -> None:
        super().__init__(base, "playground", run_timeout)
        self.index = index
        self.session_id = ""
        self.own_t: int | None = None
        self.cut_at = 0.0
        self.back_at: float | None = None
        self.ws_up_at = 0.0  # its last websocket opened (the page's "Connecting" gone)
        self.resumed = False
        self.same_page = False
        self.attempts: list[Attempt] = []
        self.rerun_s = 0.0  # the rerun after the websocket opened
        self.first_session_id = ""
        self.gave_up = False

    async def run(self) -> sessions.RunOutcome:
        tap = self.ws = _Tap(self.ws)
        try:
            return await super().run()
        finally:
            self.ws = tap.ws
            self.session_id = tap.session_id or self.session_id

    async def join(self) -> None:
        """The lecture's opening: page, websocket, first run, then T to a value of its own."""
        await self.open()
        await self.run()
        low, high = sessions.SLIDERS["seq_len"]
        t = low + (self.index * 7) % (high - low + 1)
        self.own_t = t if t != self.value("seq_len") else t + 1
        self.set_value("seq_len", self.own_t)
        out = await self.run()
        if not out.ok or self.value("seq_len") != self.own_t:
            raise ValueError(f"T did not move to {self.own_t}: {out.errors}")
        self.first_session_id = self.session_id

    def cut(self) -> None:
        """The network blip: the connection gone, no close frame."""
        self.ws.transport.abort()
        self.cut_at = time.monotonic()

    async def ping(self, deadline: float, rng: random.Random) -> list[str] | None:
        """The frontend's ping before a websocket -> the failed pings' statuses, None past the deadline."""
        refused: list[str] = []
        while time.monotonic() < deadline:
            health, config = await asyncio.gather(
                http_status(self.base, "/_stcore/health", self.cookies),
                http_status(self.base, "/_stcore/host-config", self.cookies))
            if health == config == "200":
                return refused
            refused.append(health if health != "200" else config)
            await asyncio.sleep(ping_delay(len(refused), rng))
        return None

    async def come_back(self, give_up_s: float, rng: random.Random, over: asyncio.Event) -> None:
        """Reconnect until back; then stay, and come back again if the websocket is cut again
        (a replica marked down has its sessions shut), until the round is ``over``."""
        deadline = self.cut_at + give_up_s
        attempt = 0
        while time.monotonic() < deadline and not over.is_set():
            attempt += 1
            await asyncio.sleep(reconnect_delay(attempt, rng))
            t_ping = time.monotonic()
            refused = await self.ping(deadline, rng)
            if refused is None:
                break
            protocols = ["streamlit", self.cookies.get("_streamlit_xsrf", ""), self.session_id]
            cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            t0 = time.monotonic()
            try:
                ws = await connect(f"{self.base.replace('http://', 'ws://')}/_stcore/stream",
                                   subprotocols=protocols, origin=self.base, max_size=64 * 2**20,
                                   ping_interval=None, additional_headers={"Cookie": cookie},
                                   open_timeout=WS_OPEN_TIMEOUT_S)
            except InvalidStatus as err:
                code = err.response.status_code
                took = time.monotonic() - t0
                outcome = f"{code} held" if code == 429 and took >= HELD_S else str(code)
                self.attempts.append(Attempt(t_ping - self.cut_at, outcome, took, refused, t0 - t_ping))
                continue
            except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed) as err:
                self.attempts.append(Attempt(t_ping - self.cut_at, type(err).__name__, time.monotonic() - t0,
                                             refused, t0 - t_ping))
                continue
            self.ws_up_at = time.monotonic()
            self.attempts.append(Attempt(t_ping - self.cut_at, "open", self.ws_up_at - t0, refused,
                                         t0 - t_ping))
            self.ws = ws
            self.run_timeout = max(1.0, deadline - time.monotonic())  # the browser waits for a run
            try:
                out = await self.run()  # a full rerun: the frontend's rerun_fragment is cleared
            except ConnectionClosed as err:
                self.attempts.append(Attempt(time.monotonic() - self.cut_at,
                                             f"cut before its run ({type(err).__name__})", 0.0))
                attempt = 0  # it was connected: the frontend's count starts again
                continue
            except TimeoutError:
                self.attempts.append(Attempt(time.monotonic() - self.cut_at, "run unfinished", 0.0))
                break
            self.rerun_s = out.seconds
            self.resumed = self.session_id == self.first_session_id
            self.same_page = out.ok and self.value("seq_len") == self.own_t
            self.back_at = time.monotonic()
            closed = asyncio.ensure_future(ws.wait_closed())
            ends = asyncio.ensure_future(over.wait())
            await asyncio.wait({closed, ends}, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            ends.cancel()
            if over.is_set():
                return
            self.back_at = None
            self.attempts.append(Attempt(time.monotonic() - self.cut_at, "cut again after back", 0.0))
            deadline = time.monotonic() + give_up_s
            attempt = 0
        self.gave_up = True


@dataclass
class Round:
    opened: int
    open_refused: list[str]
    first_cut: float = 0.0
    learners: list[Learner] = field(default_factory=list)
    load: str = ""
    cpu_s: float = 0.0  # every server process's, from the first cut to the round's end
    events: list[str] = field(default_factory=list)  # replicas marked down or up, when
    stuck: int = 0  # learners' tasks cut short by the round's bound
    client_errors: list[str] = field(default_factory=list)

    @property
    def back(self) -> list[Learner]:
        return [s for s in self.learners if s.back_at is not None]

    def last_back_s(self) -> float:
        return max((s.back_at - self.first_cut for s in self.back), default=float("nan"))

    def last_up_s(self) -> float:
        return max((s.ws_up_at - self.first_cut for s in self.back), default=float("nan"))


async def open_lecture(base: str, n: int, open_rate: float,
                       timeout: float) -> tuple[list[Learner], list[str]]:
    learners = [Learner(base, i, timeout) for i in range(n)]
    refused: list[str] = []

    async def one(i: int, s: Learner) -> Learner | None:
        await asyncio.sleep(i / open_rate)
        try:
            await s.join()
            return s
        except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError, KeyError, ValueError) as err:
            status = measures.refusal(err)
            refused.append(f"learner {i}: {status or repr(err)[:160]}")
            await s.close()
            return None

    joined = await asyncio.gather(*(one(i, s) for i, s in enumerate(learners)))
    return [s for s in joined if s is not None], refused


async def watch_replicas(target: servers.Target, result: Round) -> None:
    """Note when HAProxy marks a replica down or up (serve.py's log), seconds after the first cut."""
    with open(target.log.name, errors="replace") as log:
        log.seek(0, 2)
        while True:
            for line in log.readlines():
                if "Server replicas/" in line and line.startswith("[WARNING]") or "exited" in line:
                    said = line.split(":", 1)[-1].split(", reason")[0].strip()
                    detail = re.search(r"\d+ sessions active", line)
                    result.events.append(f"+{time.monotonic() - result.first_cut:.1f} s {said}"
                                         + (f" ({detail.group(0)}, shut)" if detail else ""))
            await asyncio.sleep(0.2)


async def storm(target: servers.Target, args, seed: int) -> Round:
    learners, refused = await open_lecture(target.url, args.learners, args.open_rate, args.timeout)
    result = Round(len(learners), refused, learners=learners)
    print(f"  opened {len(learners)} of {args.learners} at {args.open_rate:g} a second"
          f"{f', refused: {refused[:3]}' if refused else ''}; {measures.load_line()}", flush=True)
    await asyncio.sleep(COOL_S)
    rng = random.Random(seed)
    cpu0 = target.cpu_s()
    result.first_cut = time.monotonic()
    cuts = sorted(((rng.uniform(0, CUT_SPREAD_S), s) for s in learners), key=lambda c: c[0])

    over = asyncio.Event()

    async def cut_and_return(at: float, s: Learner) -> None:
        await asyncio.sleep(max(0.0, result.first_cut + at - time.monotonic()))
        s.cut()
        try:
            await s.come_back(args.give_up, random.Random(seed * 1000 + s.index), over)
        except Exception as err:  # the client's own failure: said, and the learner counted lost
            result.client_errors.append(f"learner {s.index}: {err!r}"[:200])
            s.back_at, s.gave_up = None, True

    async def until_over() -> None:
        stable_since = None
        while not all(s.back_at is not None or s.gave_up for s in learners) or stable_since is None \
                or time.monotonic() - stable_since < STABLE_S:
            everyone = all(s.back_at is not None or s.gave_up for s in learners)
            stable_since = (stable_since or time.monotonic()) if everyone else None
            await asyncio.sleep(0.25)
        over.set()

    watch = asyncio.create_task(watch_replicas(target, result))
    tasks = [asyncio.ensure_future(until_over()), *(asyncio.ensure_future(cut_and_return(at, s))
                                                    for at, s in cuts)]
    # A bound on the round whatever a connection does; a learner still out then is lost.
    _, pending = await asyncio.wait(tasks, timeout=2 * args.give_up + 60)
    for task in pending:
        task.cancel()
    result.stuck = len(pending)
    watch.cancel()
    result.first_cut = min(s.cut_at for s in learners)
    result.cpu_s = target.cpu_s() - cpu0
    result.load = measures.load_line()
    closing = [asyncio.ensure_future(s.close()) for s in learners]
    _, pending = await asyncio.wait(closing, timeout=15)  # a close waits up to 10 s for its answer
    for task in pending:
        task.cancel()
    for s in learners:
        with contextlib.suppress(AttributeError, OSError):
            s.ws.transport.abort()
    return result


# --------------------------------------------------------------------------- figures

BUCKETS_S = (1, 2, 5, 10, 20, 40, 60, 120)


def distribution(seconds: list[float]) -> str:
    """Learners by time out, in buckets: "<=1 s 12, <=2 s 40, ..." (empty buckets left out)."""
    counts, low = [], 0.0
    for high in (*BUCKETS_S, float("inf")):
        n = sum(low < s <= high for s in seconds)
        if n:
            counts.append(f"{low:g}-{high:g} s: {n}" if high < float("inf") else f"over {low:g} s: {n}")
        low = high
    return ", ".join(counts)


def report(r: Round, n: int) -> list[str]:
    back = r.back
    out = [s.back_at - s.cut_at for s in back]
    up = [s.ws_up_at - s.cut_at for s in back]
    reruns = [s.rerun_s for s in back]
    outcomes = Counter(a.outcome for s in r.learners for a in s.attempts)
    saw = {kind: sum(any(a.outcome == kind for a in s.attempts) for s in r.learners)
           for kind in ("429", "429 held", "503")}
    pings = Counter(p for s in r.learners for a in s.attempts for p in a.pings_refused)
    dialog = sum(any(len(a.pings_refused) >= PING_DIALOG_AFTER for a in s.attempts) for s in r.learners)
    tries = [sum(a.outcome != "open" for a in s.attempts) + 1 for s in r.learners]
    return [
        f"  back {len(back)} of {r.opened} (lost {r.opened - len(back)}; {n - r.opened} never opened), "
        f"the last {r.last_back_s():.1f} s after the first cut; {r.load}",
        f"  time out, cut to back: p50 {measures.pct(out, 50):.1f} s, p90 {measures.pct(out, 90):.1f} s, "
        f"max {max(out, default=float('nan')):.1f} s; by learner: {distribution(out)}",
        f"  websockets up: the last {r.last_up_s():.1f} s after the first cut; cut to up p50 "
        f"{measures.pct(up, 50):.1f} s, p90 {measures.pct(up, 90):.1f} s; by learner: {distribution(up)}",
        f"  the rerun after it: p50 {measures.pct(reruns, 50):.1f} s, "
        f"max {max(reruns, default=float('nan')):.1f} s; "
        f"servers' CPU from the first cut to {STABLE_S:g} s after the last back {r.cpu_s:.1f} s "
        f"({r.cpu_s / max(len(back), 1) * 1e3:.0f} ms a learner); the last try's ping p50 "
        f"{measures.pct([s.attempts[-1].ping_s for s in back], 50):.2f} s",
        f"  same page and own T after: {sum(s.same_page for s in back)}; session resumed "
        f"{sum(s.resumed for s in back)}, new {len(back) - sum(s.resumed for s in back)}",
        f"  websocket attempts {sum(outcomes.values())}: {dict(outcomes.most_common())}; tries a learner: "
        f"p50 {measures.pct(tries, 50):.0f}, max {max(tries, default=0)}",
        f"  learners who met 429 {saw['429']}, 429 after 5 s held {saw['429 held']}, 503 {saw['503']}; "
        f"pings refused {dict(pings)}, connection-error dialogs {dialog}",
        f"  learners cut again after they were back (their replica marked down): "
        f"{sum(any(a.outcome == 'cut again after back' for a in s.attempts) for s in r.learners)}",
        f"  replicas meanwhile: {'; '.join(r.events) or 'none marked down'}"
        + (f"; {r.stuck} tasks cut short by the round's bound" if r.stuck else ""),
        *(f"  the client failed: {e}" for e in r.client_errors[:5]),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", type=int, default=300)
    ap.add_argument("--open-rate", type=float, default=5.0, help="sessions opened a second")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--give-up", type=float, default=120.0, help="a learner not back this long after "
                    "its cut is lost")
    ap.add_argument("--timeout", type=float, default=60.0, help="a run's")
    ap.add_argument("--client-limits", choices=("on", "off"), default="on",
                    help="HAProxy's per-address limits (off: only the replicas' own)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not 1 <= args.learners <= sessions.MAX_SESSIONS or not 1 <= args.rounds <= 10 or args.open_rate <= 0:
        ap.error(f"1-{sessions.MAX_SESSIONS} learners, 1-10 rounds, a positive open rate")
    print(measures.reference_line(), flush=True)
    target = servers.Target("serve", options=("--client-limits", args.client_limits))
    rounds: list[Round] = []
    try:
        ready = target.wait_ready()
        settled = target.wait_settled()
        print(f"make serve (client limits {args.client_limits}): ready after {ready:.1f} s, settled "
              f"{settled:.1f} s later; {measures.load_line()}", flush=True)
        for k in range(args.rounds):
            print(f"round {k + 1} of {args.rounds}: {args.learners} learners from {LECTURE}", flush=True)
            rounds.append(asyncio.run(storm(target, args, args.seed + k)))
            print("\n".join(report(rounds[-1], args.learners)), flush=True)
            time.sleep(COOL_S)
    finally:
        target.stop()
    lasts = [r.last_back_s() for r in rounds]
    lost = sum(r.opened - len(r.back) for r in rounds)
    ups = [r.last_up_s() for r in rounds]
    print(f"over {len(rounds)} rounds: the last learner back after {statistics.median(lasts):.1f} s "
          f"(median; each {', '.join(f'{x:.1f}' for x in lasts)} s), the last websocket up after "
          f"{statistics.median(ups):.1f} s (each {', '.join(f'{x:.1f}' for x in ups)} s), {lost} lost; "
          f"{measures.load_line()}")
    problems = [p for p in target.log_problems() if "Session State API" not in p]
    for p in problems[:10]:
        print(f"server log: {p[:200]}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
