"""Class mode under load: one teacher and N students over Streamlit's own websocket protocol.

    python bench/class_load.py [--students 60] [--moves 5] [--no-kill]
    python bench/class_load.py --chaos [--students 60] [--minutes 15] [--kill-every 180]

Runs `make serve`'s deploy/serve.py on free loopback ports: two app replicas
behind HAProxy (cookie affinity spreads the students over both) sharing one
redis-server. The teacher starts a class on the Class page; each student opens
the join link (``/playground?class=CODE``). The server pushes each teacher
action to its students' pages (stockdemo/ui/classmode/push.py); their class bar's
own timer (``st.fragment(run_every=...)``, mirrored here) is the heartbeat.

The class (default):

- **moves**: the teacher moves the Playground's T ``--moves`` times. Measured:
  seconds from the move (the slider message sent) to each student's finished
  rerun showing the new T. Target: p95 <= 0.5 s.
- **page changes**: the teacher opens a Lesson step, the Lab, another Lesson
  step, the Playground. Measured: seconds from the teacher's page run sent to
  each student's finished run of that page with the teacher's settings.
  Target: p95 <= 1 s.
- **a question**: the teacher opens question 3 on the Lesson; the students
  answer; half-way one replica is killed (SIGKILL) and its students reconnect
  as a browser does (class and seat in the address). Counted: answers in Redis,
  which must be exactly N.

The chaos run (``--chaos``): a ``--minutes`` class of page changes, moves and
questions (open, everyone answers over 20 s, reveal), a replica killed every
``--kill-every`` seconds (alternating, whoever is on it, the teacher too) and
redis-server restarted once (SIGTERM, as a service restart: deploy/serve.py
starts it again on its append-only file) while a question is open. Counted:
answers each student saw confirmed, against those in Redis at the end (lost
must be 0); after each kill, the seconds until every student of the killed
replica is back on the teacher's page with the teacher's settings (target 5 s).
A teacher whose replica died takes the class back on the Class page with the
code and key (a browser's tab hands the key back by itself: classmode.keeper.keep_teacher).

Exit status 1 when a target is missed. The client runs on the same machine as
the servers and takes CPU from them; every figure is printed with the load average.

The session client is bench/load.py's (same BackMsg, same widget bookkeeping);
a Member adds what class mode needs: any page, buttons, forms, text boxes,
the pages the server switches it to, and the auto-rerun timer of a fragment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import redis  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402

from harness import sessions  # noqa: E402  the session client

TARGET_MOVE_P95_S = 0.5
TARGET_PAGE_P95_S = 1.0
TARGET_BACK_S = 5.0
SETTLE_S = 0.3  # the graph view says "settled" this long after its last picture (SETTLE_MS, pacing.js)
FOLLOW_SETTLE_S = 2.0  # ...and a following tab's after a picture the teacher's move sent (FOLLOW_SETTLE_MS)
MOVES = (9, 14, 20, 27, 35, 44, 54, 65)  # T values the teacher moves to
# The teacher's page changes: (page, its query). Each is a page the students are not on.
TOUR = (("lesson", {"step": "2"}), ("lab", {"lab": "NaN"}), ("lesson", {"step": "3"}),
        ("playground", {}))  # the Playground as the teacher left it: its T is checked
QUESTION = 3  # "T goes from 5 to 6: how many nodes will the graph gain?" (a number)
# Questions of the chaos run, in order: quick live answers (not 6, torch.compile, or 8, training).
CHAOS_QUESTIONS = (3, 1, 4, 7, 5, 2, 10, 3, 4)
CHOICES = {1: ("AddmmBackward0", "TanhBackward0"), 2: ("(10, 1)", "(10, 5, 1)"),
           7: ("smaller", "bigger"), 10: ("Yes", "No")}
WIRE_KEPT = 300  # messages a member keeps in short, for the story of a failure after joining
FINISHED = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)


@dataclass
class Seen:
    """One finished run of a member's page, as the browser would have it on screen."""

    at: float
    status: int
    path: str  # the page's URL path ("lesson")
    query: dict[str, str]
    seq_len: int | None


class Member(sessions.Session):
    """One browser tab on any page, read continuously: runs, buttons, forms, auto-reruns."""

    def __init__(self, base: str, page: str, query: dict[str, str], timeout: float):
        super().__init__(base, page, timeout, query)
        self.buttons: dict[str, tuple[str, str]] = {}  # key or label -> (widget id, fragment)
        self.auto: dict[str, float] = {}  # fragment id -> interval (s)
        self.auto_due: dict[str, float] = {}  # fragment id -> when its timer fires next
        self.texts: list[str] = []  # markdown, captions and alerts since the last full run
        self.log: list[tuple[float, str]] = []  # every text ever shown, with when
        self.errors: list[str] = []
        self.runs: list[Seen] = []
        self.paths: dict[str, str] = {}  # page script hash -> URL path
        self.changed = asyncio.Condition()
        self.closed = False
        self.stopped = False  # closed on purpose, at the end
        self._tasks: list[asyncio.Task] = []
        self.settle_at = 0.0  # when the stage's last picture settles (the browser's 300 ms)
        self.settled_graph: str | None = None  # the picture the stage last settled on
        self.moving = False  # reloading on another replica (the class bar's mover drawn)
        self.moves: list[tuple[float, str | None, str | None]] = []  # (when, from, to replica)
        self.wire: list[str] = []  # what the server sent, in short, for a failure's story

    async def open(self) -> None:
        await super().open()
        self.closed = False
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._poll()),
                       asyncio.create_task(self._settle())]

    async def close(self) -> None:
        self.closed = True
        for task in self._tasks:
            task.cancel()
        await super().close()

    async def reconnect(self) -> None:
        """A reload: the page it is on, with its address; nothing else of the page before is kept
        (its stage, its widgets, a settle still pending: the browser's page starts anew)."""
        self.page = self.path
        self._forget_page()
        self.wire.clear()  # the story starts again with the new connection
        await super().reconnect()

    @property
    def path(self) -> str:
        return self.paths.get(self.page_hash, self.page)

    @property
    def seat(self) -> str | None:
        return self.query.get("seat")

    def go(self, page: str, query: dict[str, str] | None = None) -> None:
        """Switch page in the same session, as the app's menu does."""
        self.page, self.page_hash = page, ""
        self.query = {**{k: v for k, v in self.query.items() if k in ("class", "seat")},
                      **(query or {})}
        self._forget_page()

    def _forget_page(self) -> None:
        self.widgets.clear()
        self.key_to_id.clear()
        self.buttons.clear()
        self.auto.clear()
        self.auto_due.clear()
        self.stage = None
        self.rerun_fragment = ""
        self.settle_at = 0.0  # a settle pending on the page before is that page's

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

    async def run_page(self) -> float:
        """A whole-page run, as when the tab opens: wait for it to finish -> when it was sent."""
        count = len(self.runs)
        sent = await self.send()
        await self.until(lambda: any(r.status != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                                     for r in self.runs[count:]))
        return sent

    async def click(self, key: str, states: tuple[WidgetState, ...] = ()) -> float:
        wid, fragment = self.buttons[key]
        count = len(self.runs)
        sent = await self.send(fragment, (wid,), states)
        await self.until(lambda: any(r.status != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                                     for r in self.runs[count:]))
        return sent

    async def until(self, condition, timeout: float | None = None) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(condition), timeout or self.run_timeout)

    def seen(self, text: str, since: float = 0.0) -> bool:
        return any(text in t for at, t in self.log if at >= since)

    def text_state(self, key: str, value: str) -> WidgetState:
        state = WidgetState(id=self.key_to_id[key])
        state.string_value = value
        return state

    async def _poll(self) -> None:
        """The browser's auto-rerun timer: each run_every fragment reruns on its interval,
        counted from the whole-page run that declared it (the browser's setInterval, started
        on the auto_rerun message). Sent at once, as this client did, a bar's first timer run
        came while the joining tab's first run was still sending, and Streamlit then drops the
        bar's queued messages (they are the fragment's, about to be drawn again): the tab
        showed no class bar until the bar's guard drew the page again, 0.5 s later."""
        while not self.closed:
            await asyncio.sleep(0.05)
            now = time.perf_counter()
            for fragment, due in list(self.auto_due.items()):
                if now < due or fragment not in self.auto:
                    continue
                self.auto_due[fragment] = now + self.auto[fragment]
                try:
                    await self.send(fragment, auto=True)
                except ConnectionClosed:
                    return

    async def _settle(self) -> None:
        """The graph view's settle (pacing.js): 300 ms after a new picture, whoever moved it
        (the teacher, for a follower), the panels' listener reruns their fragment; once per
        picture, and not for the first one a page opens with."""
        while not self.closed:
            await asyncio.sleep(0.05)
            if self.settle_at and time.perf_counter() >= self.settle_at and self.settler[0]:
                self.settle_at = 0.0
                self.settled_graph = self.graphs[-1][1]
                self.settle()
                try:
                    await self.send(self.rerun_fragment)
                except ConnectionClosed:
                    return

    def _see_view(self, view, fragment_id: str) -> None:
        drawn = len(self.graphs)
        opened = self.stage is None or self.stage["id"] != view.id
        super()._see_view(view, fragment_id)
        if len(self.graphs) > drawn and self.stage is not None and view.id == self.stage["id"]:
            if opened:
                self.settled_graph = self.graphs[-1][1]
            elif self.graphs[-1][1] != self.settled_graph:
                wait = FOLLOW_SETTLE_S if self.stage.get("locked") else SETTLE_S
                self.settle_at = time.perf_counter() + wait

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

    async def _move(self) -> None:
        """The class bar's mover (stockdemo/ui/classmode/mover.py): its replica holds more than its share
        of the class, so the tab drops the balancer's cookie and reloads; the balancer picks anew."""
        was = self.replica
        self.cookies.pop("SRV", None)
        try:
            await reconnect_as_a_browser(self)
            await self.run_page()
            self.moves.append((time.perf_counter(), was, self.replica))
        finally:
            self.moving = False

    def _see_element(self, el, fragment_id: str = "") -> None:
        kind = el.WhichOneof("type")
        if kind == "bidi_component" and el.bidi_component.component_name.endswith("stockdemo_class_move"):
            if not self.moving:  # as its JavaScript: drop the affinity cookie, reload the page
                self.moving = True
                asyncio.get_running_loop().create_task(self._move())
            return
        super()._see_element(el, fragment_id)
        if kind in ("text_input", "radio"):
            self.key_to_id[getattr(el, kind).id.rsplit("-", 1)[-1]] = getattr(el, kind).id

    def _read(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        now = time.perf_counter()
        if len(self.wire) < WIRE_KEPT:  # the first only: the client shares the cores it measures
            self.wire.append(f"{now:.3f} {kind}" + (
                f" {msg.delta.WhichOneof('type')}/{msg.delta.new_element.WhichOneof('type')}"
                f" {list(msg.metadata.delta_path)} f={msg.delta.fragment_id[:6]}"
                + (f" {msg.delta.new_element.bidi_component.component_name.rsplit('.', 1)[-1]}"
                   f" json={len(msg.delta.new_element.bidi_component.json)}"
                   if msg.delta.new_element.WhichOneof("type") == "bidi_component" else "")
                if kind == "delta" else
                f" hash={msg.new_session.page_script_hash[:6]} frags={list(msg.metadata.run.fragment_ids)}"
                if kind == "new_session" else f" {msg.script_finished}" if kind == "script_finished" else ""))
        if kind == "new_session":
            # Not the page: a run asked for by the page's name starts under the app's main
            # script hash and learns its page as it runs (the navigation message says it).
            # Taken for the page, that hash made a fragment run right after a reconnect look
            # like a page change, and the stage was forgotten for good (tests/test_kube.py,
            # 1 run in 10 under load).
            self.paths.update({p.page_script_hash: p.url_pathname or "" for p in msg.new_session.app_pages})
            if not msg.metadata.run.fragment_ids:
                self.texts.clear()  # a whole-page run draws everything again
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.paths.update({p.page_script_hash: p.url_pathname or "" for p in msg.navigation.app_pages})
            new_hash = msg.navigation.page_script_hash
            if self.page_hash and new_hash != self.page_hash:
                self._forget_page()  # the server switched this tab to another page
            self.page_hash = new_hash
        elif kind == "page_info_changed":
            qs = msg.page_info_changed.query_string
            self.query = dict(p.split("=", 1) for p in qs.split("&") if "=" in p)
        elif kind == "auto_rerun":
            self.auto[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
            self.auto_due[msg.auto_rerun.fragment_id] = now + msg.auto_rerun.interval
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            el = msg.delta.new_element
            etype = el.WhichOneof("type")
            self._see_element(el, msg.delta.fragment_id)
            text = None
            if etype == "button":
                key = el.button.id.rsplit("-", 1)[-1]
                entry = (el.button.id, msg.delta.fragment_id)
                self.buttons[key] = entry
                self.buttons[el.button.label] = entry
            elif etype == "markdown":
                text = el.markdown.body
            elif etype == "heading":
                text = el.heading.body
            elif etype == "code":
                text = el.code.code_text
            elif etype == "alert":
                text = el.alert.body
                if el.alert.format == el.alert.ERROR:
                    self.errors.append(f"st.error: {el.alert.body[:200]}")
            elif etype == "exception":
                self.errors.append(f"exception: {el.exception.type}: {el.exception.message[:200]}")
            if text is not None:
                self.texts.append(text)
                self.log.append((now, text))
        elif kind == "script_finished":
            seq = None
            if self.stage is not None and "seq_len" in self.stage["values"]:
                seq = int(self.value("seq_len"))  # the Playground's T, on its stage
            elif "seq_len" in self.key_to_id and self.key_to_id["seq_len"] in self.widgets:
                seq = int(self.value("seq_len"))
            self.runs.append(Seen(now, msg.script_finished, self.path, dict(self.query), seq))


async def reconnect_as_a_browser(member: Member, timeout: float = 30.0) -> int:
    """Reconnect after a lost replica as Streamlit's frontend does: try again every 0.5 s.

    -> how many tries failed. Right after a kill HAProxy may still pick the dead
    replica for a moment until deploy/serve.py holds it out; a browser just tries again.
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


def answer_state(member: Member, step: int, value: str) -> WidgetState:
    if step in CHOICES:
        state = WidgetState(id=member.key_to_id[f"class_choice_{step}"])
        state.string_value = value
    else:
        state = WidgetState(id=member.key_to_id[f"class_number_{step}"])
        state.int_value = int(value)
    return state


def a_guess(step: int, i: int) -> str:
    return CHOICES[step][i % 2] if step in CHOICES else str(3 + i % 3)


async def answer(member: Member, step: int, value: str, timeout: float, opened: float) -> str:
    """Type an answer into the open question's box and send it -> "sent" (seen confirmed),
    "kept" (since ``opened`` the box has shown this seat's answer), or "refused"."""
    key = f"class_choice_{step}" if step in CHOICES else f"class_number_{step}"
    await member.until(lambda: member.seen("Your answer: **", opened) or (
        key in member.key_to_id and "Send my answer" in member.buttons), timeout)
    if member.seen("Your answer: **", opened):
        return "kept"
    wid, fragment = member.buttons["Send my answer"]
    # As a browser: press, then watch the page (not this run's end: the confirmation is
    # drawn by the box's own rerun, which may end the run that carried the press early).
    sent = await member.send(fragment, (wid,), (answer_state(member, step, value),))
    await member.until(lambda: member.seen(f"Your answer: **{value}**", sent)
                       or member.seen("already answered", sent) or member.seen("Time is up", sent)
                       or member.seen("is kept here", sent), timeout)
    if member.seen("is kept here", sent):  # the class server was down: sent again by the tab
        await member.until(lambda: member.seen(f"Your answer: **{value}**", sent), timeout)
    return "sent" if member.seen(f"Your answer: **{value}**", sent) else "refused"


# --------------------------------------------------------------------------- the class

@dataclass
class Class:
    """A running class under load: the servers, the teacher, the students, what was measured."""

    target: sessions.Target
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
            (started - self.out.get("t0", started), what, sessions.pct(done, 50) if done else None,
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


async def start_teacher(target: sessions.Target, timeout: float,
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


async def start(args, target: sessions.Target | None = None, member: type[Member] = Member) -> Class:
    """The servers (``target``: already running ones, kept running by ``stop``), the class started;
    ``member``: the tabs' client (a Member that reads more of a page, e.g. Your code's editor)."""
    owns_target = target is None
    if target is None:
        target = sessions.Target("serve", replicas=2)
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
        # What following costs while nothing moves: every student's heartbeat.
        cpu0, t0 = {n: sessions.cpu_s(p) for n, p in replicas.items()}, time.monotonic()
        await asyncio.sleep(5.0)
        out["idle_cores"] = {n: round((sessions.cpu_s(p) - cpu0[n]) / (time.monotonic() - t0), 2)
                             for n, p in replicas.items()}
        for value in MOVES[:args.moves]:
            await room.move(value, args.follow_timeout)
            await asyncio.sleep(args.pause)
        out["on_settings"] = sum(s.runs and s.runs[-1].seq_len == MOVES[args.moves - 1]
                                 for s in room.students)
        for page, query in TOUR:
            # A page change's CPU on each replica, per student there (the teacher's run included).
            cpu0 = {n: sessions.cpu_s(p) for n, p in replicas.items()}
            await room.go(page, query, args.follow_timeout)
            there = {n: sum(s.replica == n for s in room.students) for n in replicas}
            per = {n: round(1000 * (sessions.cpu_s(p) - cpu0[n]) / max(1, there[n]), 1)
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


async def chaos(args) -> dict:
    room = None
    try:
        room = await start(args)
        out = room.out
        out["t0"] = t0 = time.perf_counter()
        end = t0 + args.minutes * 60
        names = sorted(room.target.state()["replicas"], key=lambda r: r["name"])
        kills = [t0 + args.kill_every * (i + 1) for i in range(int(args.minutes * 60 // args.kill_every))]
        restart_at = t0 + args.redis_restart_at
        rng = random.Random(26)
        reviver = asyncio.create_task(room.revive())
        questions = list(CHAOS_QUESTIONS)
        kill_no = 0
        restarted = False
        while time.perf_counter() < end:
            now = time.perf_counter()
            if kills and now >= kills[0] - 1:
                kills.pop(0)
                name = names[kill_no % len(names)]["name"]
                kill_no += 1
                if any(s.replica == name for s in room.students):
                    await room.kill(name, args.follow_timeout)
                continue
            if not restarted and now >= restart_at - 10 and questions:
                restarted = True
                step = questions.pop(0)
                out["redis_restart"] = {"question": step}
                await room.ask(step, args.follow_timeout, spread_s=20.0,
                               during=restart_redis(room, after_s=5.0))
                continue
            # The last question waits for the Redis restart (with every question asked before
            # it, a run once went without one).
            asks = len(questions) > (0 if restarted else 1)
            action = rng.choice(("move", "page", "ask")) if asks else rng.choice(("move", "page"))
            # Never to where the class is already: nothing would change, and the "arrival"
            # timed would be the next run for another reason (the bar's 10 s timer).
            if action == "move":
                now_t = room.teacher_at[1].get("seq_len") if room.teacher_at[0] == "playground" else None
                await room.move(rng.choice([t for t in range(2, 61) if str(t) != now_t]),
                                args.follow_timeout)
            elif action == "page":
                page, query = rng.choice([(p, q) for p, q in TOUR if p != room.teacher_at[0]
                                          or any(room.teacher_at[1].get(k) != v for k, v in q.items())])
                await room.go(page, query, args.follow_timeout)
            else:
                await room.ask(questions.pop(0), args.follow_timeout, spread_s=20.0)
            await asyncio.sleep(rng.uniform(2.0, 6.0))
        reviver.cancel()
        db = redis.Redis.from_url(room.redis_url, decode_responses=True)
        lost = []
        for (seat, step), value in out["acked"].items():
            stored = db.hget(f"sd:class:{room.code}:answers:{step}", seat or "")
            if stored is None or json.loads(stored)["a"] != value:
                lost.append((seat, step, value, stored))
        out["lost"] = lost
        finish(room)
        return out
    finally:
        if room is not None:
            await stop(room)


async def restart_redis(room: Class, after_s: float) -> None:
    """A service restart of redis-server (SIGTERM: it writes its append-only file and exits;
    deploy/serve.py starts it again on the same port within 0.5 s)."""
    await asyncio.sleep(after_s)
    pid = room.target.state()["redis_pid"]
    os.kill(pid, signal.SIGTERM)
    started = time.perf_counter()
    db = redis.Redis.from_url(room.redis_url, socket_timeout=0.5, socket_connect_timeout=0.5)
    while True:
        await asyncio.sleep(0.1)
        try:
            if db.ping() and room.target.state()["redis_pid"] != pid:
                break
        except redis.exceptions.RedisError:
            pass
    room.out["redis_restart"]["down_s"] = round(time.perf_counter() - started, 2)


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


def report(out: dict, args) -> int:
    n = args.students
    print(f"\nclass mode through `make serve` (deploy/serve.py: HAProxy, 2 replicas, redis-server): "
          f"1 teacher, {n} students (per replica: {out.get('spread')})")
    moves, pages = out["moves"], out["pages"]
    ok = not out["errors"]
    # The chaos run's targets are its kills (back within TARGET_BACK_S), its Redis restart and its
    # answers (none lost); its moves and pages are shown, not judged: after each kill one replica
    # holds the whole class until the rebalancing hands tabs back (see docs/hosting.md).
    timed = not args.chaos
    if args.chaos:
        print("(chaos run: moves and page changes shown for what they were, the targets are the kills, "
              "the Redis restart and the answers)")
    if moves:
        print(f"teacher's move -> student's finished rerun with the new T, {len(moves)} (student, move) "
              f"pairs: p50 {sessions.pct(moves, 50):.2f} s, p95 {sessions.pct(moves, 95):.2f} s, "
              f"max {max(moves):.2f} s (target p95 <= {TARGET_MOVE_P95_S} s)")
        print("  the last student of each move: "
              + ", ".join("never" if m is None else f"{m:.2f} s" for m in out.get("by_move", [])))
        ok = ok and (not timed or sessions.pct(moves, 95) <= TARGET_MOVE_P95_S)
    if pages:
        print(f"teacher's page change -> student's finished run of that page with the teacher's "
              f"settings, {len(pages)} pairs: p50 {sessions.pct(pages, 50):.2f} s, "
              f"p95 {sessions.pct(pages, 95):.2f} s, max {max(pages):.2f} s "
              f"(target p95 <= {TARGET_PAGE_P95_S} s)")
        for name, got in out.get("by_page", {}).items():
            print(f"  {name:24s} p50 {sessions.pct(got, 50):.2f} s, "
                  f"p95 {sessions.pct(got, 95):.2f} s ({len(got)})")
        ok = ok and (not timed or sessions.pct(pages, 95) <= TARGET_PAGE_P95_S)
    for name, per in out.get("page_cpu", []):
        print(f"  {name:24s} replica CPU per student there: "
              + ", ".join(f"{n} {ms:.1f} ms" for n, ms in per.items()))
    if "idle_cores" in out:
        print(f"CPU of each replica while the class only follows (heartbeats): {out['idle_cores']} cores")
    if "on_settings" in out:
        print(f"students on the teacher's final T: {out['on_settings']} of {n}")
        ok = ok and out["on_settings"] == n
    if "answers" in out:
        print(f"answers counted in Redis: {out['answers']} of {n}; attempts: "
              + ", ".join(f"{k} {out['outcomes'].count(k)}" for k in ("sent", "kept", "refused")))
        ok = ok and out["answers"] == n
    for kill in out["kills"]:
        back = [b for b in kill["back_s"] if b is not None]
        worst = max(back, default=float("nan"))
        missing = len(kill["back_s"]) - len(back)
        print(f"replica {kill['replica']} killed at {kill.get('at', 0):.0f} s (students per replica "
              f"before: {kill.get('spread')}; {kill['students']} students"
              f"{' and the teacher' if kill['teacher'] else ''} on it, {kill['failed_tries']} failed "
              f"reconnect tries): every student back on the teacher's page with the teacher's "
              f"settings after {worst:.2f} s" + (f", {missing} never" if missing else "")
              + f" (target {TARGET_BACK_S:.0f} s)")
        ok = ok and not missing and worst <= TARGET_BACK_S
    if len(out.get("actions", ())) > 12:  # a long class: where it was slow
        slow = sorted(out["actions"], key=lambda a: -(a[3] or 99))[:8]
        print("the slowest teacher's actions (at s, what, p50, slowest student, students over 1 s):")
        for at, what, p50, worst, late in sorted(slow):
            print(f"  {at:6.0f} s  {what:40s} p50 {p50 or float('nan'):.2f} s, slowest "
                  f"{worst or float('nan'):.2f} s, {late} over 1 s")
    if out.get("rebalanced"):
        print(f"tabs moved to another replica by the class push's rebalancing: {len(out['rebalanced'])} "
              f"(at {sorted(round(m[0]) for m in out['rebalanced'])[:12]} s; from -> to: "
              f"{sorted({(m[1], m[2]) for m in out['rebalanced']})})")
    if out.get("drops"):
        print(f"tabs whose connection dropped outside a kill, and came back as browsers do: "
              f"{len(out['drops'])} (at {out['drops'][:10]} s)")
    if "redis_restart" in out:
        print(f"redis-server restarted during question {out['redis_restart']['question']}: "
              f"down {out['redis_restart'].get('down_s', float('nan')):.2f} s")
    elif args.chaos:
        print("redis-server was NOT restarted (no question left at its time)")
    ok = ok and (not args.chaos or "down_s" in out.get("redis_restart", {}))
    if "lost" in out:
        print(f"answers confirmed to students: {len(out['acked'])}; lost: {len(out['lost'])}")
        for seat, step, value, stored in out["lost"][:10]:
            print(f"  lost: question {step}, seat {seat}: {value!r} (Redis has {stored!r})")
        ok = ok and not out["lost"]
    print(f"1/5/15-min load average at the end: {out.get('loadavg')} (2 cores, shared)")
    for problem in out["errors"][:10]:
        print("  error:", problem)
    for line in out.get("log", [])[:20]:
        print("  server log:", line[:200])
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--moves", type=int, default=5)
    ap.add_argument("--pause", type=float, default=1.0, help="s between the teacher's actions")
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


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(sessions.reference_line(), flush=True)
    out = asyncio.run(chaos(args) if args.chaos else drive(args))
    return report(out, args)


if __name__ == "__main__":
    sys.exit(main())
