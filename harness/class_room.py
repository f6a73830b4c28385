"""A class under load: one teacher and N students (harness/class_member.py's tabs) on ``make serve``'s
deploy/serve.py (two replicas behind HAProxy, one redis-server), driven through moves, page
changes and a question with a replica killed (``drive``). bench/class_load.py times it with 60
students; tests/test_classroom.py and test_serve.py run it with a few.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import time
from dataclasses import dataclass, field

import redis
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness import measures, servers
from harness.class_member import FINISHED, Member, Seen, a_guess, answer, reconnect_as_a_browser

MOVES = (9, 14, 20, 27, 35, 44, 54, 65)  # T values the teacher moves to
# The teacher's page changes: (page, its query). Each is a page the students are not on.
TOUR = (("lesson", {"step": "2"}), ("lab", {"lab": "NaN"}), ("lesson", {"step": "3"}),
        ("playground", {}))  # the Playground as the teacher left it: its T is checked
QUESTION = 3  # "T goes from 5 to 6: how many nodes will the graph gain?" (a number)


@dataclass
class Class:
    """A running class under load: the servers, the teacher, the students, what was measured."""

    target: servers.Target
    teacher: Member
    students: list[Member]
    code: str
    key: str
    timeout: float
    redis_url: str
    out: dict = field(default_factory=lambda: {"moves": [], "pages": [], "errors": [],
                                               "kills": [], "acked": {}, "drops": []})
    teacher_at: tuple[str, dict[str, str]] = ("playground", {})
    reviving: set = field(default_factory=set)  # members being reconnected right now
    owns_target: bool = True  # started the servers (and stops them at the end)

    async def revive(self) -> None:
        """As browsers do: a tab whose connection dropped (not by a kill here) reconnects.

        Runs for the whole chaos class, once a second; each drop is counted."""
        while True:
            await asyncio.sleep(1.0)
            for m in (self.teacher, *self.students):
                if m.closed and m not in self.reviving and not m.stopped and not m.moving:
                    self.reviving.add(m)
                    self.out["drops"].append(round(time.perf_counter() - self.out.get("t0", 0), 1))
                    asyncio.create_task(self._back(m))

    async def _back(self, m: Member) -> None:
        try:
            await reconnect_as_a_browser(m)
            await m.run_page()
            if m is self.teacher and not m.seen("You are teaching class", time.perf_counter() - 5):
                await self.resume()
        except Exception as err:  # counted: the class goes on
            self.out["errors"].append(f"a dropped tab did not come back: {err!r}")
        finally:
            self.reviving.discard(m)

    async def ready(self) -> None:
        """The teacher's tab is connected (a drop being revived is waited for)."""
        for _ in range(120):
            if not self.teacher.closed and self.teacher not in self.reviving:
                return
            await asyncio.sleep(0.5)

    def wanted(self, run: Seen, page: str, query: dict[str, str]) -> bool:
        """A student's run shows the teacher's page with the teacher's settings (T as its
        slider shows it: the address follows the slider, not always in the same run)."""
        if run.status not in FINISHED or run.path != page:
            return False
        return all((run.seq_len == int(v)) if k == "seq_len" else run.query.get(k) == v
                   for k, v in query.items())

    @staticmethod
    def runs_since(m: Member, index: int, started: float) -> str:
        """A student's runs from ``index`` on, for a report: when, status, page, T."""
        return ", ".join(f"{r.at - started:+.2f} s {ForwardMsg.ScriptFinishedStatus.Name(r.status)} "
                         f"{r.path} T={r.seq_len}" for r in m.runs[index:]) or "none"

    async def arrivals(self, since_index: list[int], page: str, query: dict[str, str],
                       started: float, timeout: float, members: list[Member] | None = None
                       ) -> list[float | None]:
        """Seconds from ``started`` to each student's first run on the teacher's page."""
        members = self.students if members is None else members
        indexes = [since_index[self.students.index(m)] for m in members]

        def first(m: Member, i: int) -> float | None:
            return next((r.at - started for r in m.runs[i:] if self.wanted(r, page, query)), None)

        async def one(m: Member, i: int) -> float | None:
            try:
                await m.until(lambda: first(m, i) is not None, timeout)
            except TimeoutError:
                return None
            return first(m, i)

        return list(await asyncio.gather(*(one(m, i) for m, i in zip(members, indexes, strict=True))))

    async def move(self, value: int, follow_timeout: float) -> None:
        await self.ready()
        if self.teacher_at[0] != "playground":
            await self.go("playground", {}, follow_timeout, measured=False)
        if str(value) == self.teacher_at[1].get("seq_len"):  # a move, not a no-op
            value = value + 1 if value < 60 else value - 1
        count = [len(s.runs) for s in self.students]
        self.teacher.set_value("seq_len", value)
        moved = await self.teacher.send(self.teacher.rerun_fragment)
        self.teacher_at = ("playground", {"seq_len": str(value)})
        got = await self.arrivals(count, "playground", {"seq_len": str(value)}, moved, follow_timeout)
        self.out["moves"].extend(g for g in got if g is not None)
        self.out.setdefault("by_move", []).append(max((g for g in got if g is not None), default=None))
        self._log_action(moved, f"move to T={value}", got)
        if None in got:
            self.out["errors"].append(f"move to T={value}: {got.count(None)} students did not follow "
                                      f"within {follow_timeout:.0f} s; their runs since: "
                                      + "; ".join(self.runs_since(s, c, moved) for s, c, g
                                                  in zip(self.students, count, got, strict=True)
                                                  if g is None))

    def _log_action(self, started: float, what: str, got: list[float | None]) -> None:
        """Each teacher's action, when, and how long its students took: the report's slowest."""
        done = [g for g in got if g is not None]
        self.out.setdefault("actions", []).append(
            (started - self.out.get("t0", started), what, measures.pct(done, 50) if done else None,
             max(done, default=None), sum(g is None or g > 1.0 for g in got)))

    async def go(self, page: str, query: dict[str, str], follow_timeout: float,
                 measured: bool = True) -> None:
        """The teacher opens a page (as through the menu, or a lesson link); the class follows."""
        await self.ready()
        count = [len(s.runs) for s in self.students]
        self.teacher.go(page, query)
        sent = await self.teacher.run_page()
        if page == "playground" and self.teacher.stage is not None:
            query = {**query, "seq_len": str(int(self.teacher.value("seq_len")))}  # on its stage
        self.teacher_at = (page, query)
        got = await self.arrivals(count, page, query, sent, follow_timeout)
        if measured:
            self._log_action(sent, f"page {page} {query}", got)
            self.out["pages"].extend(g for g in got if g is not None)
            name = page + "".join(f" {k}={v}" for k, v in query.items() if k != "seq_len")
            self.out.setdefault("by_page", {}).setdefault(name, []).extend(g for g in got if g is not None)
        if None in got:
            self.out["errors"].append(f"page {page} {query}: {got.count(None)} students did not "
                                      f"follow within {follow_timeout:.0f} s")

    async def ask(self, step: int, follow_timeout: float, spread_s: float = 0.0,
                  during=None) -> list[str]:
        """Question ``step`` on the Lesson: open it, everyone answers (over ``spread_s``), reveal.

        ``during``: a coroutine run while the answers come in (a kill, a Redis restart).
        """
        if self.teacher_at != ("lesson", {"step": str(step)}):
            await self.go("lesson", {"step": str(step)}, follow_timeout, measured=False)
        await self.ready()
        opened = await self.teacher.click("class_open")
        rng = random.Random(step)

        async def one(i: int, student: Member) -> str:
            await asyncio.sleep(rng.uniform(0, spread_s))
            value = a_guess(step, i)
            outcome = await answer(student, step, value, self.timeout, opened)
            if outcome == "sent":
                self.out["acked"][(student.seat, step)] = value
            return outcome

        jobs = [one(i, s) for i, s in enumerate(self.students)]
        if during is not None:
            jobs.append(during)
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)
        for i, outcome in enumerate(outcomes[:len(self.students)]):
            if isinstance(outcome, BaseException):
                self.out["errors"].append(f"question {step}, student {i}: {outcome!r}; last words: "
                                          f"{self.students[i].texts[-2:]}")
        if during is not None and isinstance(outcomes[-1], BaseException):
            self.out["errors"].append(f"question {step}: {outcomes[-1]!r}")
        if "class_reveal" in self.teacher.buttons:
            await self.teacher.click("class_reveal")
        return [o for o in outcomes[:len(self.students)] if isinstance(o, str)]

    async def kill(self, name: str, follow_timeout: float) -> None:
        """SIGKILL one replica; its members reconnect as browsers do; seconds until each student
        is back on the teacher's page with the teacher's settings."""
        on_it = [m for m in (self.teacher, *self.students) if m.replica == name]
        spread = {r: sum(s.replica == r for s in self.students) for r in sorted(
            {s.replica for s in self.students if s.replica})}
        self.reviving.update(on_it)
        count = [len(s.runs) for s in self.students]
        killed_at = time.perf_counter()
        pid = self.target.kill_replica(name)
        for m in on_it:
            try:
                await m.until(lambda m=m: m.closed, 30)
            except TimeoutError:
                pass  # still open: HAProxy has not closed it yet; the browser would wait, too
        retries = await asyncio.gather(*(reconnect_as_a_browser(m) for m in on_it))
        await asyncio.gather(*(m.run_page() for m in on_it), return_exceptions=True)
        if self.teacher in on_it:
            await self.resume()
        page, query = self.teacher_at
        moved = [s for s in self.students if s in on_it]
        got = await self.arrivals(count, page, query, killed_at, follow_timeout, moved)
        self.reviving.difference_update(on_it)
        self.out["kills"].append({
            "replica": name, "pid": pid, "students": len(moved), "teacher": self.teacher in on_it,
            "spread": spread,
            "failed_tries": sum(retries), "back_s": got,
            "at": round(killed_at - self.out.get("t0", killed_at), 1)})

    async def resume(self) -> None:
        """The teacher's replica died: take the class back on the Class page with code and key."""
        page, query = self.teacher_at
        self.teacher.go("classroom")
        await self.teacher.run_page()
        await self.teacher.click("Teach this class", (
            self.teacher.text_state("class_resume_code", self.code),
            self.teacher.text_state("class_resume_key", self.key)))
        self.teacher.go(page, query)
        await self.teacher.run_page()


async def start_teacher(target: servers.Target, timeout: float,
                        member: type[Member] = Member) -> tuple[Member, str, str]:
    """A teacher's tab that started a class on the Class page -> (the tab, the class code, its key)."""
    teacher = member(target.url, "classroom", {}, timeout)
    await teacher.open()
    await teacher.run_page()
    await teacher.click("class_start")
    await teacher.until(lambda: any("class=" in t for t in teacher.texts))
    code = re.search(r"class=([A-Z0-9]{8})", next(t for t in teacher.texts if "class=" in t))[1]
    key = next(t for t in teacher.texts if re.fullmatch(r"[A-Za-z0-9_-]{32}", t.strip())).strip()
    return teacher, code, key


async def start(args, target: servers.Target | None = None, member: type[Member] = Member) -> Class:
    """The servers (``target``: already running ones, kept running by ``stop``), the class started;
    ``member``: the tabs' client (a Member that reads more of a page, e.g. Your code's editor)."""
    owns_target = target is None
    if target is None:
        target = servers.Target("serve", replicas=2)
        target.wait_ready()
        target.wait_settled()
    state = target.state()
    teacher, code, key = await start_teacher(target, args.timeout, member)
    teacher.go("playground")
    await teacher.run_page()
    students = [member(target.url, "playground", {"class": code}, args.timeout)
                for _ in range(args.students)]
    for student in students:
        await student.open()
    await asyncio.gather(*(s.run_page() for s in students))
    room = Class(target, teacher, students, code, key, args.timeout,
                 f"redis://127.0.0.1:{state['redis_port']}/0", owns_target=owns_target)
    room.out["spread"] = {r["name"]: sum(s.replica == r["name"] for s in students)
                          for r in state["replicas"]}
    not_following = [i for i, s in enumerate(students) if not s.seen("following the teacher")]
    if not_following:
        room.out["errors"].append(f"students not following after joining: {not_following}")
        for i in not_following:  # what each showed instead, and how its runs ended
            s = students[i]
            room.out["errors"].append(
                f"  student {i} on {s.replica}, {s.path}?{s.query}: runs "
                f"{[(round(r.at - s.runs[0].at, 2), r.status, r.path) for r in s.runs]}, "
                f"texts {[t[:80] for _, t in s.log]}, errors {s.errors}")
            room.out["errors"].append("    wire: " + " | ".join(s.wire[:120]))
    return room


async def drive(args) -> dict:
    room = None
    try:
        room = await start(args)
        out = room.out
        out["t0"] = time.perf_counter()
        replicas = {r["name"]: r["pid"] for r in room.target.state()["replicas"]}
        if args.idle_s:  # what following costs while nothing moves: every student's heartbeat
            cpu0, t0 = {n: servers.cpu_s(p) for n, p in replicas.items()}, time.monotonic()
            await asyncio.sleep(args.idle_s)
            out["idle_cores"] = {n: round((servers.cpu_s(p) - cpu0[n]) / (time.monotonic() - t0), 2)
                                 for n, p in replicas.items()}
        for value in MOVES[:args.moves]:
            await room.move(value, args.follow_timeout)
            await asyncio.sleep(args.pause)
        out["on_settings"] = sum(s.runs and s.runs[-1].seq_len == MOVES[args.moves - 1]
                                 for s in room.students)
        for page, query in TOUR:
            # A page change's CPU on each replica, per student there (the teacher's run included).
            cpu0 = {n: servers.cpu_s(p) for n, p in replicas.items()}
            await room.go(page, query, args.follow_timeout)
            there = {n: sum(s.replica == n for s in room.students) for n in replicas}
            per = {n: round(1000 * (servers.cpu_s(p) - cpu0[n]) / max(1, there[n]), 1)
                   for n, p in replicas.items()}
            name = page + "".join(f" {k}={v}" for k, v in query.items())
            out.setdefault("page_cpu", []).append((name, per))
            await asyncio.sleep(args.pause)
        # Question 3 on the Lesson: half the class answers, a replica dies, then the rest.
        await room.go("lesson", {"step": str(QUESTION)}, args.follow_timeout, measured=False)
        opened = await room.teacher.click("class_open")
        half = len(room.students) // 2
        first = await asyncio.gather(*(answer(s, QUESTION, a_guess(QUESTION, i), args.timeout, opened)
                                       for i, s in enumerate(room.students[:half])),
                                     return_exceptions=True)
        if args.kill:
            doomed = room.students[-1].replica
            await room.kill(doomed, args.follow_timeout)
        rest = await asyncio.gather(*(answer(s, QUESTION, a_guess(QUESTION, i), args.timeout, opened)
                                      for i, s in enumerate(room.students)), return_exceptions=True)
        out["outcomes"] = [r for r in (*first, *rest) if isinstance(r, str)]
        for s, r in zip((*room.students[:half], *room.students), (*first, *rest), strict=True):
            if isinstance(r, BaseException):
                out["errors"].append(f"student did not answer: {r!r}; on {s.path} {s.query.get('step')}"
                                     f" (closed: {s.closed}), last words: {[t[:60] for t in s.texts[-3:]]}")
        db = redis.Redis.from_url(room.redis_url, decode_responses=True)
        out["answers"] = db.hlen(f"sd:class:{room.code}:answers:{QUESTION}")
        finish(room)
        return out
    finally:
        if room is not None:
            await stop(room)


def finish(room: Class) -> None:
    t0 = room.out.get("t0", 0.0)
    room.out["rebalanced"] = [(at - t0, was, now) for m in room.students for at, was, now in m.moves]
    for m in (room.teacher, *room.students):
        room.out["errors"].extend(m.errors)
    room.out["loadavg"] = os.getloadavg()


async def stop(room: Class) -> None:
    for m in (room.teacher, *room.students):
        m.stopped = True
        await m.close()
    if not room.owns_target:
        return
    room.target.stop()
    room.out["log"] = [p for p in room.target.log_problems()
                       if "Session State API" not in p and "check_session_state_rules" not in p]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Class mode under load: one teacher and N students.")
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--moves", type=int, default=5)
    ap.add_argument("--pause", type=float, default=1.0, help="s between the teacher's actions")
    ap.add_argument("--idle-s", type=float, default=5.0,
                    help="s the class only follows before the first move, its CPU measured (0: none)")
    ap.add_argument("--timeout", type=float, default=60.0, help="per run, s")
    ap.add_argument("--follow-timeout", type=float, default=15.0,
                    help="s for every student to follow one action")
    ap.add_argument("--no-kill", dest="kill", action="store_false",
                    help="keep both replicas alive during the question")
    ap.add_argument("--chaos", action="store_true", help="the long class with kills and a Redis restart")
    ap.add_argument("--minutes", type=float, default=15.0)
    ap.add_argument("--kill-every", type=float, default=180.0, help="s between replica kills")
    ap.add_argument("--redis-restart-at", type=float, default=450.0,
                    help="s into the chaos run, roughly: Redis restarts during the question then")
    args = ap.parse_args(argv)
    if not 2 <= args.students <= 100 or not 1 <= args.moves <= len(MOVES):
        ap.error(f"--students must be 2..100 and --moves 1..{len(MOVES)}")
    return args
