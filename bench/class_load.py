"""Class mode under load: one teacher and N students over Streamlit's own websocket protocol.

    python bench/class_load.py [--students 30] [--moves 5] [--no-kill]

Runs `make serve`'s deploy/serve.py on free loopback ports: two app replicas
behind HAProxy (cookie affinity spreads the students over both) sharing one
redis-server. The teacher starts a class on the Class page, opens the
Playground and moves T ``--moves`` times. Each student opened the join link
(``/playground?class=CODE``); their browser-side poll (the fragment's
``run_every`` timer, mirrored here) finds the new version and their page reruns.

Measured: seconds from the teacher's move (the slider message sent) to each
student's finished rerun showing the new T; p50/p95/max over all students and
moves; whether every student ends on the teacher's settings. Then the teacher
opens question 3 on the Lesson page, the students answer, and half-way through
one replica is killed (SIGKILL): its students reconnect to the other replica
with the same link (class and seat in the address) and answer there. Counted:
answers in Redis, which must be exactly N.

Exit status 1 when a target is missed: p95 <= 1 s, every student on the
teacher's settings, exactly N answers, no errors.

The session client is bench/load.py's (same BackMsg, same widget bookkeeping);
a Member adds what class mode needs: any page, buttons, forms, and the
auto-rerun timer of ``st.fragment(run_every=...)``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import load  # noqa: E402  bench/load.py: the protocol session client
import redis  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402

TARGET_P95_S = 1.0
MOVES = (9, 14, 20, 27, 35, 44, 54, 65)  # T values the teacher moves to
QUESTION = 3  # "T goes from 5 to 6: how many nodes will the graph gain?" (a number)


class Member(load.Session):
    """One browser tab on any page, read continuously: runs, buttons, forms, auto-reruns."""

    def __init__(self, base: str, page: str, query: dict[str, str], timeout: float):
        super().__init__(base, page, timeout, query)
        self.buttons: dict[str, tuple[str, str]] = {}  # key or label -> (widget id, fragment)
        self.auto: dict[str, float] = {}  # fragment id -> interval (s)
        self.texts: list[str] = []  # markdown, captions and alerts since the last full run
        self.errors: list[str] = []
        self.finished: list[tuple[float, int, int | None]] = []  # (time, status, seq_len)
        self.changed = asyncio.Condition()
        self.closed = False
        self._tasks: list[asyncio.Task] = []

    async def open(self) -> None:
        await super().open()
        self.closed = False
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._poll())]

    async def close(self) -> None:
        self.closed = True
        for task in self._tasks:
            task.cancel()
        await super().close()

    def go(self, page: str, query: dict[str, str] | None = None) -> None:
        """Switch page in the same session, as the app's menu does."""
        self.page, self.page_hash = page, ""
        self.query = dict(query or {})
        self.widgets.clear()
        self.key_to_id.clear()
        self.rerun_fragment = ""

    async def send(self, fragment: str = "", triggers: tuple[str, ...] = (),
                   states: tuple[WidgetState, ...] = (), auto: bool = False) -> float:
        for state in states:
            self.widgets[state.id] = state  # as the browser: the typed value stays the widget's
        msg = self._rerun_msg()
        cs = msg.rerun_script
        cs.fragment_id = fragment
        cs.is_auto_rerun = auto
        for wid in triggers:
            cs.widget_states.widgets.append(WidgetState(id=wid, trigger_value=True))
        sent = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        return sent

    async def run_page(self) -> None:
        """A whole-page run, as when the tab opens: wait for it to finish."""
        count = len(self.finished)
        await self.send()
        await self.until(lambda: any(s != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                                     for _, s, _ in self.finished[count:]))

    async def click(self, key: str, states: tuple[WidgetState, ...] = ()) -> None:
        wid, fragment = self.buttons[key]
        count = len(self.finished)
        await self.send(fragment, (wid,), states)
        await self.until(lambda: any(s != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                                     for _, s, _ in self.finished[count:]))

    async def until(self, condition, timeout: float | None = None) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(condition), timeout or self.run_timeout)

    def seen(self, text: str) -> bool:
        return any(text in t for t in self.texts)

    async def _poll(self) -> None:
        """The browser's auto-rerun timer: each run_every fragment reruns on its interval."""
        while not self.closed:
            await asyncio.sleep(min(self.auto.values(), default=0.25))
            for fragment in list(self.auto):
                try:
                    await self.send(fragment, auto=True)
                except ConnectionClosed:
                    return

    async def _listen(self) -> None:
        try:
            async for data in self.ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self._read(msg)
                async with self.changed:
                    self.changed.notify_all()
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            async with self.changed:
                self.changed.notify_all()

    def _read(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.page_hash = msg.new_session.page_script_hash or self.page_hash
            if not msg.metadata.run.fragment_ids:
                self.texts.clear()  # a whole-page run draws everything again
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            qs = msg.page_info_changed.query_string
            self.query = dict(p.split("=", 1) for p in qs.split("&") if "=" in p)
        elif kind == "auto_rerun":
            self.auto[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            el = msg.delta.new_element
            etype = el.WhichOneof("type")
            self._see_element(el, msg.delta.fragment_id)
            if etype == "button":
                key = el.button.id.rsplit("-", 1)[-1]
                entry = (el.button.id, msg.delta.fragment_id)
                self.buttons[key] = entry
                self.buttons[el.button.label] = entry
            elif etype == "markdown":
                self.texts.append(el.markdown.body)
            elif etype == "code":
                self.texts.append(el.code.code_text)
            elif etype == "alert":
                self.texts.append(el.alert.body)
                if el.alert.format == el.alert.ERROR:
                    self.errors.append(f"st.error: {el.alert.body[:200]}")
            elif etype == "exception":
                self.errors.append(f"exception: {el.exception.type}: {el.exception.message[:200]}")
        elif kind == "script_finished":
            seq = None
            if self.stage is not None and "seq_len" in self.stage["values"]:
                seq = int(self.value("seq_len"))  # the Playground's T, on its stage
            elif "seq_len" in self.key_to_id and self.key_to_id["seq_len"] in self.widgets:
                seq = int(self.value("seq_len"))
            self.finished.append((time.perf_counter(), msg.script_finished, seq))


async def reconnect_as_a_browser(member: Member, timeout: float = 30.0) -> int:
    """Reconnect after a lost replica as Streamlit's frontend does: try again every 0.5 s.

    -> how many tries failed. Right after a kill HAProxy may still pick the dead
    replica for a moment (a 502 was seen in one test run of many) until
    deploy/serve.py holds it out; a browser just tries again.
    """
    deadline = time.monotonic() + timeout
    failed = 0
    while True:
        try:
            await member.reconnect()
            return failed
        except (OSError, ConnectionClosed, InvalidStatus):  # urllib's HTTPError is an OSError
            failed += 1
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


def number_state(member: Member, key: str, value: int) -> WidgetState:
    state = WidgetState(id=member.key_to_id[key])
    state.int_value = value
    return state


async def answer(member: Member, value: int, timeout: float) -> str:
    """Type a number into the open question's box and send it -> "sent", or "kept" when
    the box already shows this seat's answer (given before a reconnect)."""
    key = f"class_number_{QUESTION}"
    polled = len(member.finished)  # decide on a box drawn from now on
    await member.until(lambda: len(member.finished) > polled and (member.seen("Your answer") or (
        key in member.key_to_id and "Send my answer" in member.buttons)), timeout)
    if member.seen("Your answer"):
        return "kept"
    await member.click("Send my answer", (number_state(member, key, value),))
    # A poll may cut the confirmation's run short; the box then shows the answer given.
    await member.until(lambda: member.seen("Answer sent") or member.seen("Your answer")
                       or member.seen("already answered"), timeout)
    return "refused" if member.seen("already answered") else "sent"


async def drive(args) -> dict:
    # `make serve`: two replicas behind HAProxy (cookie affinity) and one redis-server.
    target = load.Target("serve", replicas=2)
    members: list[Member] = []
    out: dict = {"latencies": [], "errors": [], "students": args.students}
    try:
        target.wait_ready()
        state = target.state()
        base = target.url
        redis_url = f"redis://127.0.0.1:{state['redis_port']}/0"
        replicas = {r["name"]: r["pid"] for r in state["replicas"]}
        teacher = Member(base, "classroom", {}, args.timeout)
        await teacher.open()
        members.append(teacher)
        await teacher.run_page()
        await teacher.click("class_start")
        await teacher.until(lambda: any("class=" in t for t in teacher.texts))
        code = re.search(r"class=([A-Z0-9]{8})", next(t for t in teacher.texts if "class=" in t))[1]
        teacher.go("playground")
        await teacher.run_page()

        students = [Member(base, "playground", {"class": code}, args.timeout)
                    for i in range(args.students)]
        members.extend(students)
        for student in students:
            await student.open()
        await asyncio.gather(*(s.run_page() for s in students))
        out["spread"] = {n: sum(s.replica == n for s in students) for n in replicas}
        not_following = [i for i, s in enumerate(students) if not s.seen("following the teacher")]
        if not_following:
            out["errors"].append(f"students not following after joining: {not_following}")
        # What following costs while nothing moves: every student's poll, twice a second.
        cpu0, t0 = {n: load.cpu_s(p) for n, p in replicas.items()}, time.monotonic()
        await asyncio.sleep(5.0)
        out["idle_cores"] = {n: round((load.cpu_s(p) - cpu0[n]) / (time.monotonic() - t0), 2)
                             for n, p in replicas.items()}

        for value in MOVES[:args.moves]:
            count = [len(s.finished) for s in students]

            def arrived(i: int, value: int = value, count: list[int] = count) -> float | None:
                """When student i's first finished run showing the new T ended."""
                return next((t for t, status, seq in students[i].finished[count[i]:]
                             if seq == value and status != ForwardMsg.FINISHED_EARLY_FOR_RERUN),
                            None)

            teacher.set_value("seq_len", value)
            moved = await teacher.send(teacher.rerun_fragment)
            try:
                await asyncio.gather(*(s.until(lambda i=i: arrived(i) is not None,
                                               args.follow_timeout)
                                       for i, s in enumerate(students)))
            except TimeoutError:
                out["errors"].append(f"move to T={value}: some students did not follow within "
                                     f"{args.follow_timeout:.0f} s")
            out["latencies"].extend(arrived(i) - moved for i in range(len(students))
                                    if arrived(i) is not None)
            await asyncio.sleep(args.pause)
        final = MOVES[args.moves - 1]
        out["on_settings"] = sum(int(s.value("seq_len")) == final for s in students)

        # Question 3 on the Lesson page: open it; students answer; a replica dies half-way.
        teacher.go("lesson", {"step": str(QUESTION)})
        await teacher.run_page()
        await teacher.click("class_open")
        half = args.students // 2
        first = await asyncio.gather(*(answer(s, 4 + i % 3, args.timeout)
                                       for i, s in enumerate(students[:half])),
                                     return_exceptions=True)
        out["errors"].extend(f"student {i} did not answer: {r!r}; last words: {s.texts[-3:]}"
                             for i, (s, r) in enumerate(zip(students[:half], first, strict=True))
                             if isinstance(r, Exception))
        out["outcomes"] = [r for r in first if isinstance(r, str)]
        if args.kill:
            doomed = students[-1].replica  # a replica some students are on
            out["killed"] = f"replica {doomed} (pid {target.kill_replica(doomed)})"
            moved_over = [s for s in students if s.replica == doomed]
            for s in moved_over:
                await s.until(lambda s=s: s.closed, 30)
            # As the browser: the same address (class and seat in it), HAProxy picks a live replica.
            retries = await asyncio.gather(*(reconnect_as_a_browser(s) for s in moved_over))
            out["reconnect_retries"] = sum(retries)
            await asyncio.gather(*(s.run_page() for s in moved_over))
        # Everyone answers now: those on the dead replica who had answered see their answer.
        rest = await asyncio.gather(*(answer(s, 4 + i % 3, args.timeout)
                                      for i, s in enumerate(students)), return_exceptions=True)
        out["errors"].extend(f"student {i} ({'moved over' if s in members[-len(students):] else 'stayed'})"
                             f" did not answer: {r!r}; last words: {s.texts[-3:]}"
                             for i, (s, r) in enumerate(zip(students, rest, strict=True))
                             if isinstance(r, Exception))
        out["outcomes"] += [r for r in rest if isinstance(r, str)]
        db = redis.Redis.from_url(redis_url, decode_responses=True)
        out["answers"] = db.hlen(f"sd:class:{code}:answers:{QUESTION}")
        for m in members:
            out["errors"].extend(m.errors)
        out["loadavg"] = os.getloadavg()
    finally:
        for m in members:
            await m.close()
        target.stop()
        out["log"] = [p for p in target.log_problems()
                      if "Session State API" not in p and "check_session_state_rules" not in p]
    return out


def report(out: dict, args) -> int:
    lat = out["latencies"]
    n = args.students
    print(f"\nclass mode through `make serve` (deploy/serve.py: HAProxy, 2 replicas, redis-server): "
          f"1 teacher, {n} students (per replica: {out.get('spread')}), {args.moves} teacher moves")
    print(f"teacher's move -> student's finished rerun with the new T, over {len(lat)} "
          f"(student, move) pairs: p50 {load.pct(lat, 50):.2f} s, p95 {load.pct(lat, 95):.2f} s, "
          f"max {max(lat, default=float('nan')):.2f} s (target p95 <= {TARGET_P95_S} s)")
    print(f"CPU of each replica while the class only follows (polls, no moves): "
          f"{out.get('idle_cores')} cores")
    print(f"students on the teacher's final settings: {out.get('on_settings')} of {n}")
    print(f"answers counted in Redis: {out.get('answers')} of {n}"
          + (f"; killed mid-question: {out['killed']}, its students reconnected after "
             f"{out.get('reconnect_retries', 0)} failed tries" if out.get("killed") else ""))
    outcomes = out.get("outcomes", [])
    print("answer attempts: " + ", ".join(f"{k} {outcomes.count(k)}"
                                          for k in ("sent", "kept", "refused")))
    print(f"1/5/15-min load average at the end: {out.get('loadavg')} (2 cores, shared)")
    for problem in out["errors"][:10]:
        print("  error:", problem)
    for line in out.get("log", [])[:20]:
        print("  server log:", line[:200])
    ok = (len(lat) == n * args.moves and load.pct(lat, 95) <= TARGET_P95_S
          and out.get("on_settings") == n and out.get("answers") == n and not out["errors"])
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--moves", type=int, default=5)
    ap.add_argument("--pause", type=float, default=1.0, help="s between the teacher's moves")
    ap.add_argument("--timeout", type=float, default=60.0, help="per run, s")
    ap.add_argument("--follow-timeout", type=float, default=15.0,
                    help="s for every student to follow one move")
    ap.add_argument("--no-kill", dest="kill", action="store_false",
                    help="keep both replicas alive during the question")
    args = ap.parse_args(argv)
    if not 2 <= args.students <= 100 or not 1 <= args.moves <= len(MOVES):
        ap.error(f"--students must be 2..100 and --moves 1..{len(MOVES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return report(asyncio.run(drive(args)), args)


if __name__ == "__main__":
    sys.exit(main())
