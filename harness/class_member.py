"""One browser tab in a class, over Streamlit's own websocket protocol: the client of the class
benchmarks (bench/class_load.py, bench/class_challenge.py) and of the tests that drive a class
on ``make serve`` or the cluster (tests/test_classroom.py, test_serve.py, test_kube.py).

The session client is harness/sessions.py's (same BackMsg, same widget bookkeeping); a Member
adds what class mode needs: any page, buttons, forms, text boxes, the pages the server switches
it to, and the auto-rerun timer of a fragment.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.exceptions import ConnectionClosed, InvalidStatus

from harness import sessions

FOLLOW_SETTLE_S = 2.0  # ...and a following tab's after a picture the teacher's move sent (FOLLOW_SETTLE_MS)
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
                wait = FOLLOW_SETTLE_S if self.stage.get("locked") else sessions.SETTLE_S
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
