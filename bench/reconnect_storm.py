"""A lecture of 300 behind one address loses its network for a moment: how long until every
learner is back on the teacher's step.

    python bench/reconnect_storm.py [--learners 300] [--open-rate 5] [--rounds 5] [--give-up 120]
                                    [--client-limits on|off] [--teacher-stays] [--profile FILE]

Starts ``deploy/serve.py`` (``make serve``: two replicas behind HAProxy with
deploy/haproxy.cfg's default limits, and redis) on free loopback ports. Every
connection comes from 127.0.0.1, the lecture's one NAT address.

1. **The class**: a teacher starts a class on the Class page and opens the Lesson's
   step 2; ``--learners`` students open the join link (``/playground?class=CODE``),
   ``--open-rate`` a second (5: 300 in a minute, the opening the limits are sized for),
   and each follows the teacher to step 2 as the app takes it there. Each is a real
   Streamlit session read as a browser reads it (harness/class_member.py's ``Member``:
   its class bar's timer, the pages the server pushes).
2. **The blip**, after 12 s of quiet (the 10 s rates back to a lecture's), in each
   round: every student's websocket is cut (the TCP connection aborted, no close
   frame), each at a random moment in 1.5 s, so the first reconnects land within 2 s.
   One second after the first cut the teacher (on another network) goes to the next
   step (``--teacher-stays``: not).
3. **The reconnects**, each as Streamlit 1.67's frontend does them
   (bench/frontend_reconnect.py: its backoff, its pings, then the websocket naming its
   session), then the rerun the frontend asks for (a class bar has a timer, so it
   always asks) with the widget states it holds.

A student is **back** once its websocket is open and since then the page has drawn the
teacher's step (its heading), the class bar has said it follows the teacher, and a run
has ended on the Lesson with that step in its address. **Lost**: not back
``--give-up`` seconds after its cut. Per round: how many came back, when the last one
did (from the first cut), each one's time out, what the attempts got (429, 429 held
by HAProxy's tarpit, 503, resets), sessions resumed against new ones, the servers'
CPU, replicas HAProxy marked down (serve.py's log), and for a learner out more than
10 s its runs since the cut (each start and end: a start with no end is a run whose last
messages never came) and whether its session was resumed or new. Over the rounds: each
one's last back, and their median. Target: in every round, all back on the teacher's
step, the last within 10 s; exit 1 when missed.

Everything runs on this machine's loopback; the client shares the 2 cores with the
servers, so the times are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

import frontend_reconnect as frontend  # noqa: E402  how Streamlit's frontend comes back
from load import profile_start, profile_stop  # noqa: E402  py-spy on the first replica
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus  # noqa: E402

from harness import measures, servers, sessions  # noqa: E402
from harness.class_member import FINISHED, Member  # noqa: E402  a class member read as a browser reads it
from harness.class_room import start_teacher  # noqa: E402

TARGET_S = 10.0
STEP = 2  # the Lesson's step the class is on when the network drops
COOL_S = 12.0  # quiet before the blip and between rounds: the limits count over 10 s
CUT_SPREAD_S = 1.5  # the cuts' spread: with the first backoff (<= 0.5 s) every first try is within 2 s
TEACHER_MOVES_AT_S = 1.0  # after the first cut
HELD_S = 4.5  # a refusal this slow was held by HAProxy's tarpit (5 s)
TICK_S = 0.1  # the client's timers' grain: 300 tabs waking every 50 ms would take the servers' CPU


@dataclass
class Attempt:
    at: float  # seconds after the student's cut, its ping sent
    outcome: str  # "open", "429", "429 held", "503", an error's name
    seconds: float  # the attempt's own time (websocket opening)
    pings_refused: list[str] = field(default_factory=list)  # statuses of the failed pings before it


@dataclass
class Trip:
    """One student's way back from one cut, kept once the round is over."""

    cut_at: float
    up_at: float  # its websocket open again
    back_at: float | None  # on the teacher's step (None: lost)
    resumed: bool  # the session it had, not a new one
    attempts: list[Attempt]
    story: str = ""  # its runs since the cut, for the report's slowest and lost


class Student(Member):
    """A following student's tab that, cut, reconnects as Streamlit's frontend does."""

    def __init__(self, base: str, code: str, timeout: float) -> None:
        super().__init__(base, "playground", {"class": code}, timeout)
        self.session_id = ""
        self.first_session_id = ""
        self.cut_at = 0.0
        self.up_at = 0.0  # its websocket open again
        self.back_at: float | None = None
        self.attempts: list[Attempt] = []
        self.starts: list[tuple[float, str]] = []  # (when, "whole" or "part"): a run's first message

    def _read(self, msg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            self.starts.append((time.perf_counter(), "part" if msg.metadata.run.fragment_ids else "whole"))
        kept = self.auto_due.get(msg.auto_rerun.fragment_id) if kind == "auto_rerun" and \
            self.auto.get(msg.auto_rerun.fragment_id) == msg.auto_rerun.interval else None
        super()._read(msg)
        if kept is not None:  # the frontend keeps a timer whose interval is the same (handleAutoRerun)
            self.auto_due[msg.auto_rerun.fragment_id] = kept

    async def _poll(self) -> None:
        """The class bar's timer, at a coarser grain than the Member's (300 tabs). The frontend's
        setInterval ticks on while the connection is down, and those ticks send nothing."""
        now = time.perf_counter()
        for fragment, at in list(self.auto_due.items()):  # the ticks while it was cut
            while fragment in self.auto and at <= now:
                at = self.auto_due[fragment] = at + self.auto[fragment]
        while not self.closed:
            now = time.perf_counter()
            due = [(at, f) for f, at in self.auto_due.items() if f in self.auto]
            if due and min(due)[0] <= now:
                at, fragment = min(due)
                self.auto_due[fragment] = at + self.auto[fragment]
                try:
                    await self.send(fragment, auto=True)
                except ConnectionClosed:
                    return
                continue
            await asyncio.sleep(min([TICK_S * 5] + [at - now for at, _ in due]))

    async def _settle(self) -> None:
        """A Lesson step has no stage to settle; the Member's loop would only wake 20 times a second."""

    def trip(self) -> Trip:
        cut = time.perf_counter() - (time.monotonic() - self.cut_at)
        # Each run as the browser got it: its start, then its end (status, page, address, the
        # step drawn); a start with no end after it is a run whose last messages never came.
        said = sorted([(at, f"start {what}") for at, what in self.starts if at >= cut] + [
            (r.at, f"end {r.status} {r.path} step {r.query.get('step')} (drawn {self.drawn_step(r.at)})")
            for r in self.runs if r.at >= cut])
        story = f"session {self.session_id[:8]}: " + (
            ", ".join(f"+{at - cut:.1f} s {what}" for at, what in said) or "no run")
        return Trip(self.cut_at, self.up_at, self.back_at, self.session_id == self.first_session_id,
                    list(self.attempts), story)

    def drawn_step(self, before: float) -> str:
        """The Lesson step whose heading ("3. ...") the page drew last before ``before``."""
        return next((t.split(".")[0] for at, t in reversed(self.log)
                     if at <= before and re.match(r"\d+\. ", t)), "none")

    def on_step(self, step: int, since: float) -> bool:
        """Since ``since`` the page drew the teacher's ``step`` and the bar said it follows the
        teacher, and a run ended on the Lesson with that step in its address."""
        drawn = any(at >= since and t.startswith(f"{step}. ") for at, t in self.log)  # its heading
        return drawn and self.seen("following the teacher", since) and any(
            r.at >= since and r.status in FINISHED and r.path == "lesson"
            and r.query.get("step") == str(step) for r in self.runs)

    def cut(self) -> None:
        """The network blip: the connection gone, no close frame."""
        self.first_session_id = self.session_id
        self.back_at = None
        self.attempts.clear()
        self.ws.transport.abort()
        for task in self._tasks:
            task.cancel()
        self.closed = True
        self.cut_at = time.monotonic()

    async def resume(self, rng: random.Random, deadline: float) -> bool:
        """One reconnect attempt after its backoff: ping, then the websocket -> whether it opened."""
        refused = await frontend.ping(self.base, self.cookies, deadline, rng)
        if refused is None:
            return False
        t0 = time.monotonic()
        protocols = ["streamlit", self.cookies.get("_streamlit_xsrf", ""), self.session_id]
        try:
            ws = await connect(f"{self.base.replace('http://', 'ws://')}/_stcore/stream",
                               subprotocols=protocols, origin=self.base, max_size=64 * 2**20,
                               ping_interval=None, open_timeout=frontend.WS_OPEN_TIMEOUT_S,
                               additional_headers={"Cookie": "; ".join(
                                   f"{k}={v}" for k, v in self.cookies.items())})
        except InvalidStatus as err:
            took = time.monotonic() - t0
            code = err.response.status_code
            outcome = f"{code} held" if code == 429 and took >= HELD_S else str(code)
            self.attempts.append(Attempt(t0 - self.cut_at, outcome, took, refused))
            return False
        except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed) as err:
            self.attempts.append(Attempt(t0 - self.cut_at, type(err).__name__, time.monotonic() - t0,
                                         refused))
            return False
        self.up_at = time.monotonic()
        self.attempts.append(Attempt(t0 - self.cut_at, "open", self.up_at - t0, refused))
        self.ws, self.closed = ws, False
        self.rerun_fragment = ""
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._poll())]
        await self.send()  # the frontend's rerun: the whole page, with the widget states it holds
        return True

    async def come_back(self, step: int, give_up_s: float, rng: random.Random) -> None:
        """Reconnect until back on the teacher's ``step``; a websocket cut again before that is
        the next attempt, as in the browser."""
        deadline = self.cut_at + give_up_s
        attempt = 0
        while time.monotonic() < deadline:
            attempt += 1
            await asyncio.sleep(frontend.reconnect_delay(attempt, rng))
            if not await self.resume(rng, deadline):
                continue
            since = time.perf_counter()
            try:
                await self.until(lambda since=since: self.closed or self.on_step(step, since),
                                 max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                return
            if not self.closed:
                self.back_at = time.monotonic()
                return
            attempt = 0  # it was connected: the frontend's count starts again


@dataclass
class Round:
    learners: list[Trip]
    first_cut: float = 0.0
    step: int = STEP  # the teacher's step the students must land on
    load: str = ""
    cpu_s: float = 0.0  # every server process's, from the first cut to the last one back
    events: list[str] = field(default_factory=list)  # replicas marked down or up, when
    client_errors: list[str] = field(default_factory=list)

    @property
    def back(self) -> list[Trip]:
        return [s for s in self.learners if s.back_at is not None]

    def last_back_s(self) -> float:
        return max((s.back_at - self.first_cut for s in self.back), default=float("nan"))


async def open_class(target: servers.Target, n: int, open_rate: float,
                     timeout: float) -> tuple[Member, list[Student], list[str]]:
    """The teacher on step STEP, and the students who joined and followed them there."""
    teacher, code, _ = await start_teacher(target, timeout)
    teacher.go("lesson", {"step": str(STEP)})
    await teacher.run_page()
    refused: list[str] = []

    async def one(i: int) -> Student | None:
        await asyncio.sleep(i / open_rate)
        s = Student(target.url, code, timeout)
        try:
            await s.open()
            await s.run_page()
            await s.until(lambda: s.on_step(STEP, 0.0))
            return s
        except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError, KeyError) as err:
            refused.append(f"student {i}: {measures.refusal(err) or repr(err)[:160]}")
            await s.close()
            return None

    joined = await asyncio.gather(*(one(i) for i in range(n)))
    return teacher, [s for s in joined if s is not None], refused


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


async def storm(target: servers.Target, teacher: Member, students: list[Student],
                args, k: int) -> Round:
    """One blip: every student cut within CUT_SPREAD_S, the teacher moving on meanwhile.

    Back means on the step the teacher goes to: one who returns before the teacher's move
    is back once the move has reached them too."""
    now = int(teacher.query.get("step", STEP))
    result = Round([], step=now if args.teacher_stays else now % 9 + 1)  # 9: then step 1
    rng = random.Random(args.seed + k)
    cpu0 = target.cpu_s()
    result.first_cut = time.monotonic()
    cuts = [(rng.uniform(0, CUT_SPREAD_S), i, s) for i, s in enumerate(students)]

    async def cut_and_return(at: float, i: int, s: Student) -> None:
        await asyncio.sleep(max(0.0, result.first_cut + at - time.monotonic()))
        s.cut()
        try:
            await s.come_back(result.step, args.give_up, random.Random((args.seed * 10 + k) * 1000 + i))
        except Exception as err:  # the client's own failure: said, and the student counted lost
            result.client_errors.append(f"{err!r}"[:200])

    async def teacher_moves() -> None:
        await asyncio.sleep(TEACHER_MOVES_AT_S)
        teacher.go("lesson", {"step": str(result.step)})
        await teacher.run_page()

    watch = asyncio.create_task(watch_replicas(target, result))
    jobs = [cut_and_return(at, i, s) for at, i, s in cuts] + ([] if args.teacher_stays else [teacher_moves()])
    await asyncio.wait_for(asyncio.gather(*jobs), args.give_up + 60)
    watch.cancel()
    result.learners = [s.trip() for s in students]
    result.cpu_s = target.cpu_s() - cpu0
    result.load = measures.load_line()
    return result


# --------------------------------------------------------------------------- figures

BUCKETS_S = (1, 2, 5, 10, 20, 40, 60, 120)


def distribution(seconds: list[float]) -> str:
    """Learners by time out, in buckets: "1-2 s: 40, ..." (empty buckets left out)."""
    counts, low = [], 0.0
    for high in (*BUCKETS_S, float("inf")):
        n = sum(low < s <= high for s in seconds)
        if n:
            counts.append(f"{low:g}-{high:g} s: {n}" if high < float("inf") else f"over {low:g} s: {n}")
        low = high
    return ", ".join(counts)


def report(r: Round) -> list[str]:
    back = r.back
    out = [s.back_at - s.cut_at for s in back]
    up = [s.up_at - s.cut_at for s in back]
    outcomes = Counter(a.outcome for s in r.learners for a in s.attempts)
    saw = {kind: sum(any(a.outcome == kind for a in s.attempts) for s in r.learners)
           for kind in ("429", "429 held", "503")}
    pings = Counter(p for s in r.learners for a in s.attempts for p in a.pings_refused)
    dialog = sum(any(len(a.pings_refused) >= frontend.PING_DIALOG_AFTER for a in s.attempts)
                 for s in r.learners)
    tries = [len(s.attempts) for s in r.learners]
    resumed = sum(s.resumed for s in back)
    return [
        f"  back on the teacher's step ({r.step}) {len(back)} of {len(r.learners)} "
        f"(lost {len(r.learners) - len(back)}), the last {r.last_back_s():.1f} s after the first cut; "
        f"{r.load}",
        f"  time out, cut to back: p50 {measures.pct(out, 50):.1f} s, p90 {measures.pct(out, 90):.1f} s, "
        f"max {max(out, default=float('nan')):.1f} s; by learner: {distribution(out)}",
        f"  cut to websocket open: p50 {measures.pct(up, 50):.1f} s, p90 {measures.pct(up, 90):.1f} s, "
        f"max {max(up, default=float('nan')):.1f} s; open to back p50 "
        f"{measures.pct([b - u for b, u in zip(out, up, strict=True)], 50):.2f} s",
        f"  servers' CPU from the first cut to the last back {r.cpu_s:.1f} s "
        f"({r.cpu_s / max(len(back), 1) * 1e3:.0f} ms a learner); session resumed {resumed}, "
        f"new {len(back) - resumed}",
        f"  websocket attempts {sum(outcomes.values())}: {dict(outcomes.most_common())}; tries a learner: "
        f"p50 {measures.pct(tries, 50):.0f}, max {max(tries, default=0)}",
        f"  learners who met 429 {saw['429']}, 429 after 5 s held {saw['429 held']}, 503 {saw['503']}; "
        f"pings refused {dict(pings)}, connection-error dialogs {dialog}",
        f"  replicas meanwhile: {'; '.join(r.events) or 'none marked down'}",
        *[f"  lost: {s.attempts[-1].outcome if s.attempts else 'no attempt'}, runs since its cut: "
          f"{s.story[:900]}" for s in r.learners if s.back_at is None][:5],
        *[f"  slow: back {s.back_at - s.cut_at:.1f} s after its cut, up at {s.up_at - s.cut_at:.1f} s "
          f"({'resumed' if s.resumed else 'new session'}), runs since its cut: {s.story[:900]}"
          for s in sorted(back, key=lambda s: s.cut_at - s.back_at)[:3] if s.back_at - s.cut_at > TARGET_S],
        *(f"  the client failed: {e}" for e in r.client_errors[:5]),
    ]


async def lecture(target: servers.Target, args) -> list[Round]:
    teacher, students, refused = await open_class(target, args.learners, args.open_rate, args.timeout)
    print(f"class opened: {len(students)} of {args.learners} students on step {STEP} at "
          f"{args.open_rate:g} a second{f', refused: {refused[:3]}' if refused else ''}; "
          f"{measures.load_line()}", flush=True)
    rounds: list[Round] = []
    try:
        for k in range(args.rounds):
            await asyncio.sleep(COOL_S)
            print(f"round {k + 1} of {args.rounds}: {len(students)} students from 127.0.0.1 cut",
                  flush=True)
            spy = profile_start(target, args.profile) if args.profile and not k else None
            rounds.append(await storm(target, teacher, students, args, k))
            if spy is not None:
                profile_stop(spy, args.profile, top=30)
            print("\n".join(report(rounds[-1])), flush=True)
    finally:
        for m in (teacher, *students):
            await m.close()
    return rounds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", type=int, default=300)
    ap.add_argument("--open-rate", type=float, default=5.0, help="students joining a second")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--give-up", type=float, default=120.0, help="a learner not back this long after "
                    "its cut is lost")
    ap.add_argument("--timeout", type=float, default=60.0, help="a run's")
    ap.add_argument("--client-limits", choices=("on", "off"), default="on",
                    help="HAProxy's per-address limits (off: only the replicas' own)")
    ap.add_argument("--teacher-stays", action="store_true", help="the teacher stays on the step")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", metavar="FILE", help="py-spy's raw samples of the first replica "
                    "during the first round's storm, to FILE")
    args = ap.parse_args()
    if not 1 <= args.learners <= sessions.MAX_SESSIONS or not 1 <= args.rounds <= 10 or args.open_rate <= 0:
        ap.error(f"1-{sessions.MAX_SESSIONS} learners, 1-10 rounds, a positive open rate")
    print(measures.reference_line(), flush=True)
    target = servers.Target("serve", options=("--client-limits", args.client_limits))
    try:
        ready = target.wait_ready()
        settled = target.wait_settled()
        print(f"make serve (client limits {args.client_limits}): ready after {ready:.1f} s, settled "
              f"{settled:.1f} s later; {measures.load_line()}", flush=True)
        rounds = asyncio.run(lecture(target, args))
    finally:
        target.stop()
    lasts = [r.last_back_s() for r in rounds]
    lost = sum(len(r.learners) - len(r.back) for r in rounds)
    met = not lost and rounds and max(lasts) <= TARGET_S
    print(f"over {len(rounds)} rounds: the last learner back on the teacher's step after "
          f"{', '.join(f'{x:.1f}' for x in lasts)} s (median {statistics.median(lasts):.1f} s, "
          f"worst {max(lasts):.1f} s), {lost} lost; {measures.load_line()}")
    for p in [p for p in target.log_problems() if "Session State API" not in p][:10]:
        print(f"server log: {p[:200]}")
    print(f"target (in every round all back on the teacher's step, the last within {TARGET_S:g} s): "
          + ("met" if met else "missed"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
