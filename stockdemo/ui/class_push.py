"""The server's push: every student page in this process reruns the moment its class changes.

One thread per server process reads the version of every class its students
are in, one round trip each PUSH_S, and on a change asks Streamlit to rerun,
for each of those students, the Playground's live part (which takes the
teacher's settings itself) and, a moment later and only if what it shows
changed (the page, the step, the open question, the reveal, a countdown that
ran out, the end), the class bar, as the browser's own timer would. A move so
costs each student one run; a new page (or new settings of a page other than the
Playground), one whole run of that page at the follower's address (``_page_run``).

It is also every student's heartbeat: each HEARTBEAT_S it tells the class
store which of its students' tabs are connected (and following), so a tab
needs no timer of its own for that; the bar's timer is only a slow safety net.
And it keeps the class spread over the server processes: this process's count
goes on the replica roll (``stockdemo.replicas``), and when it holds more than its
share (a replica came back after a kill and holds none), some of its followers'
bars are rerun to reload their tab without the balancer's affinity cookie.

A push waits until the tab's previous run is over: a rerun request that reaches
a session whose last run has finished but whose messages are still on their way
starts a new script runner, and Streamlit 1.67 then drops those last messages
(AppSession.request_rerun says so; seen in bench/class_load.py under load as a
Lesson whose answer box never arrived).

Streamlit has no public way to start a session's run from the server: this
uses ``Runtime.get_app_session`` (documented thread-safe) and the session's
``request_rerun`` on the server's event loop. Anything missing (no runtime, as
in AppTest; a session gone) leaves the bar's own timer to do it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from urllib.parse import parse_qs, urlencode

import streamlit as st
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

from stockdemo.classroom import PLAYGROUND, ClassError, Classroom, ClassState, replicas, version_of
from stockdemo.config import PRESENT
from stockdemo.ui.class_session import class_room
from stockdemo.ui.frame import ROOT

PUSH_S = 0.1  # how often each server process looks at the versions of its students' classes
FRESH_S = 3 * PUSH_S  # a read of the class this recent is as good as a new one
BAR_AFTER_S = 0.8  # a pushed class bar reruns this long after the live part it follows
# The Playground's live part is its stage. The panels under it (predictions, ops...) catch
# up as on anyone's Playground: the browser tells their fragment once the stage has settled
# (stockdemo.ui.stage.settle_listener), so a move pushes the stage and nothing else.
HEARTBEAT_S = 2.0  # presence counts a seat for classroom.PRESENCE_S (5 s)
# A push this soon after a tab's page changed reruns its whole page, not a part. The browser
# (Streamlit 1.67) takes a part's run for a page change when it reads the page it shows before
# it has applied the page change that came just before: it empties the page and the part's
# blocks land in nothing ("Bad delta path", a blank tab). Seen when a push followed a page
# change within milliseconds (tests/browser/test_class_follow_browser.py, 1 run in 6 here).
PAGE_SETTLE_S = 2.0
GIVEN_S = 3.0  # a pushed bar or page run takes the read that pushed it if it starts this soon
IDLE_WAIT_S = 0.03  # a push to a tab whose run is not over tries again this much later...
IDLE_TRIES = 100  # ...this many times (3 s), then goes anyway
# Rebalancing: at most this many tabs asked to move at once, and none again before the
# moved ones have reloaded elsewhere and the roll has counted them there.
MOVE_BATCH = 10
MOVE_COOLDOWN_S = 3 * replicas.BEAT_S
# ...and only an imbalance that lasts: while a class joins, the roll (said every 2 s) lags
# the balancer, which spreads the tabs itself; acting on it moved 7 of 60 joining students
# to the replica they were on (bench/class_load.py).
SUSTAINED_S = 3 * replicas.BEAT_S
_LOGGER = logging.getLogger(__name__)


class Pusher:
    """Reruns the class parts of every student page in this process as soon as their class changes."""

    def __init__(self, room: Classroom, autostart: bool = True) -> None:
        self.room = room
        self.autostart = autostart  # False: no thread, ``look`` is called by hand (tests)
        self.lock = threading.Lock()
        # code -> session id -> {"bar": rerun of its class bar, "live": of its live part}
        self.members: dict[str, dict[str, dict[str, ClientState]]] = {}
        self.versions: dict[str, tuple[int, tuple[str, ...]]] = {}  # code -> last seen (version, bar)
        self.states: dict[str, tuple[float, ClassState | None]] = {}  # code -> (read at, state)
        self.seats: dict[str, tuple[str, bool]] = {}  # session id -> (seat, following)
        self.thread: threading.Thread | None = None
        self.beat_at = 0.0
        self.roll: replicas.Roll | None = None  # this process on the replica roll, if shared
        self.moving: dict[str, float] = {}  # session id -> when its tab was asked to move
        self.told: set[str] = set()  # ...and those whose bar has drawn the move
        self.pages: dict[str, tuple[str, float]] = {}  # session id -> (its page, since when)
        self.shown: dict[str, tuple[str, tuple]] = {}  # code -> the teacher's (page, settings) last seen
        self.opened: set[str] = set()  # tabs pushed to a page whose address their browser must get
        self.hashes: dict[str, str] = {}  # page file -> its page script hash
        self.given: dict[str, tuple[float, ClassState]] = {}  # session id -> (when, the read it was pushed)
        self.moved_at = -MOVE_COOLDOWN_S
        self.over_since: float | None = None  # when this process last went over its share

    def watch(self, session_id: str, code: str | None, part: str = "bar",
              rerun: ClientState | None = None, seat: str | None = None,
              following: bool = False) -> None:
        """Rerun this session's ``part`` when class ``code`` changes; ``rerun`` None: not that part.

        ``code`` None: this session is in no class any more. ``seat``: its seat, kept
        present in the class (and following, or not) while the session is connected.
        """
        with self.lock:
            for other, seats in self.members.items():
                if other != code:
                    seats.pop(session_id, None)
            if seat is not None:
                self.seats[session_id] = (seat, following)
            if code is None:
                self.seats.pop(session_id, None)
                self.pages.pop(session_id, None)
                self.opened.discard(session_id)
                self.given.pop(session_id, None)
                return
            parts = self.members.setdefault(code, {}).setdefault(session_id, {})
            if rerun is None:
                parts.pop(part, None)
            else:
                parts[part] = rerun
                seen = self.pages.get(session_id)
                if seen is None:  # the tab's first page here (a join, a reload): no change
                    self.pages[session_id] = (rerun.page_script_hash, -PAGE_SETTLE_S)
                elif seen[0] != rerun.page_script_hash:
                    self.pages[session_id] = (rerun.page_script_hash, time.monotonic())
            if self.thread is None and self.autostart:
                self.thread = threading.Thread(target=self._loop, name="class-push", daemon=True)
                self.thread.start()

    def _loop(self) -> None:
        while True:
            time.sleep(PUSH_S)
            try:
                self.look()
            except Exception:  # never let the thread die: the bars' timers would be all that is left
                _LOGGER.exception("class push: one look failed")

    def look(self) -> None:
        """One look at every watched class; a push to each member of those that changed."""
        with self.lock:
            for seats in self.members.values():
                for session_id in [sid for sid, parts in seats.items() if not parts]:
                    del seats[session_id]
            for code in [c for c, seats in self.members.items() if not seats]:
                del self.members[code]  # nobody here is in it any more (ended, left, closed)
                self.versions.pop(code, None)
            watched = {code: {sid: dict(parts) for sid, parts in seats.items()}
                       for code, seats in self.members.items()}
        if not watched:
            if self.roll is not None:
                self.roll.tabs = 0
            return
        beat = time.monotonic() - self.beat_at >= HEARTBEAT_S
        try:
            states = self.room.states(watched)
            if beat:
                self.beat_at = time.monotonic()
                present = self._present(watched)
                self.room.heartbeat(present)
        except ClassError:
            return  # Redis is down: the bars' own timers say so and carry on
        read_at, now = time.monotonic(), time.time()
        versions = {code: version_of(state, now) for code, state in states.items()}
        with self.lock:
            self.states = {code: (read_at, state) for code, state in states.items()}
        if beat:
            self.balance(present, watched, versions)
        with self.lock:
            seats = dict(self.seats)
        for code, (version, bar) in versions.items():
            last_version, last_bar = self.versions.setdefault(code, (version, bar))
            state = states.get(code)
            shown = (state.page, tuple(sorted(state.params.items()))) if state else ("", ())
            last_shown = self.shown.setdefault(code, shown)
            if (version, bar) != (last_version, last_bar):
                self.versions[code] = (version, bar)
                self.shown[code] = shown
                new_page = bar[:1] != last_bar[:1]
                # Another page, or another page's settings (the Playground's are a move): a
                # follower runs the teacher's page whole, as it would after the bar opened it.
                opened = state is not None and (new_page or (
                    shown != last_shown and state.page != PLAYGROUND))
                for session_id, parts in watched[code].items():
                    if opened and "bar" in parts and seats.get(session_id, ("", False))[1]:
                        self.push(session_id, [("page", 0.0, parts["bar"], None)], state)
                    else:
                        self.push(session_id, self.targets(parts, bar != last_bar, new_page), state)

    def balance(self, present: dict[str, list[tuple[str, bool]]], watched: dict[str, dict[str, dict]],
                versions: dict[str, tuple[int, tuple[str, ...]]]) -> None:
        """Say this process's class tabs on the roll; above its share, ask some followers to move.

        A move reloads the tab, a couple of seconds off the teacher's page: never the
        teacher's, never one exploring on its own, never while its class has a question
        open (the answer is kept, but a half-typed one is not).
        """
        if self.roll is None:
            return
        now = time.monotonic()
        alive = _alive()
        with self.lock:  # a moved tab has left (its session closed) or had its time
            self.moving = {sid: at for sid, at in self.moving.items()
                           if sid in self.seats and alive(sid) and now - at < MOVE_COOLDOWN_S}
            self.told &= set(self.moving)
        self.roll.tabs = sum(len(seats) for seats in present.values())
        excess = self.roll.over_share()
        if not excess:
            self.over_since = None
            return
        if self.over_since is None:
            self.over_since = now
        if now - self.over_since < SUSTAINED_S or now - self.moved_at < MOVE_COOLDOWN_S:
            return
        with self.lock:
            seats = dict(self.seats)
        asked = []
        for code, sessions in watched.items():
            _, bar = versions.get(code, (0, ()))
            if len(bar) > 3 and bar[2] and bar[3] == "0":
                continue  # a question is open
            for sid, parts in sessions.items():
                if len(asked) < min(excess, MOVE_BATCH) and seats.get(sid, ("", False))[1] \
                        and "bar" in parts and sid not in self.moving:
                    asked.append((sid, parts["bar"]))
        if not asked:
            return
        self.moved_at = now
        with self.lock:
            self.moving.update((sid, now) for sid, _ in asked)
        for sid, bar in asked:
            self.push(sid, [("bar", 0.0, bar, None)])
        _LOGGER.info("class push: %d tabs asked to move to another replica (%d over the share)",
                     len(asked), excess)

    def latest(self, code: str, max_age_s: float = FRESH_S) -> ClassState | None:
        """The class as this thread read it last, if that was within ``max_age_s`` (else None).

        A pushed run takes the teacher's move from here: the thread read the class to push
        it a moment ago, and a read of its own by each of 30 followers took 30 more round
        trips to Redis per move.
        """
        with self.lock:
            read_at, state = self.states.get(code, (-1e9, None))
        return state if time.monotonic() - read_at <= max_age_s else None

    def given_state(self, session_id: str) -> ClassState | None:
        """The class as read to push this tab's bar or page, if it was pushed within GIVEN_S; said once.

        Only a pushed run takes it: a run of the tab's own (a join, a reload, its timer) reads
        the store. (A read taken by any run, as fresh as FRESH_S, once left a joining student
        on the page before for 30 s under load: the push of the newer page had gone before
        the tab was watched.) Each change is pushed to every tab watched when it is read, so a
        tab given an older read is pushed the newer one after.
        """
        with self.lock:
            at, state = self.given.pop(session_id, (-GIVEN_S, None))
        return state if time.monotonic() - at <= GIVEN_S else None

    def move_asked(self, session_id: str) -> bool:
        """Whether this tab was asked to reload elsewhere (``balance``); said once."""
        with self.lock:
            if session_id not in self.moving or session_id in self.told:
                return False
            self.told.add(session_id)
            return True

    def _present(self, watched: dict[str, dict[str, dict]]) -> dict[str, list[tuple[str, bool]]]:
        """{code: [(seat, following)]} of the watched tabs this server still holds connected."""
        alive = _alive()
        with self.lock:
            seats = dict(self.seats)
        return {code: [seats[sid] for sid in sessions if sid in seats and alive(sid)]
                for code, sessions in watched.items()}

    def push(self, session_id: str, targets: list[tuple[str, float, ClientState]],
             state: ClassState | None = None) -> None:
        """Rerun a member's parts, each after its delay: (part, delay, its rerun request).

        Part "page" (with the class's ``state``): the whole teacher's page, with its settings.
        ``state``: the read that made this push, handed to the class bar's run (``given``).
        """
        if not targets:
            return
        if state is not None and any(part in ("bar", "page") for part, *_ in targets):
            with self.lock:
                self.given[session_id] = (time.monotonic(), state)
        if not Runtime.exists():
            return
        runtime = Runtime.instance()
        session = runtime.get_app_session(session_id)
        if session is None:  # the tab closed
            self.watch(session_id, None)
            return

        def rerun(part: str, request: ClientState, fallback: ClientState | None,
                  tries: int = 0) -> None:
            if getattr(session, "_scriptrunner", None) is not None and tries < IDLE_TRIES:
                # Its last run is not over (or its messages are still on their way).
                loop.call_later(IDLE_WAIT_S, rerun, part, request, fallback, tries + 1)
                return
            if part == "page" and (whole := self._page_run(session, session_id, state)) is not None:
                session.request_rerun(whole)
                return
            for wanted in (request, fallback):
                if wanted is not None and session.has_fragment(wanted.fragment_id):
                    # (No live part this moment: the tab is in a whole-page run, or left the
                    # Playground. The bar takes the move and asks for the live part itself.)
                    session.request_rerun(self._settled(session_id, _as_now(session, wanted)))
                    return

        loop = runtime._get_async_objs().eventloop
        for part, delay, request, fallback in targets:
            if delay:
                loop.call_soon_threadsafe(loop.call_later, delay, rerun, part, request, fallback)
            else:
                loop.call_soon_threadsafe(rerun, part, request, fallback)

    def _page_run(self, session, session_id: str, state: ClassState | None) -> ClientState | None:
        """A whole run of the teacher's page, at its address, for a following tab; None if
        that page is not one of the app's (the bar opens it then, or says where it is).

        What the class bar would do (``classroom._open_page``: it opens the page, and the
        page then runs whole), less the bar's own run: one run a student instead of two, and
        no run of the old page (the page change of 30 students on a replica was ~20 ms of its
        CPU each, bench/class_load.py). The browser takes a whole run of another page as a
        page change, as after ``st.switch_page``; the bar then sends it the address
        (``page_opened``).
        """
        with self.lock:
            seat, _ = self.seats.get(session_id, (None, False))
        page_hash = self._page_hash(session, state.page) if state is not None else None
        if page_hash is None or seat is None:
            return None
        now = getattr(session, "_client_state", None)  # the tab's address now, as Streamlit 1.67 keeps it
        present = isinstance(now, ClientState) and \
            parse_qs(now.query_string).get(PRESENT.name, [""])[-1] == "1"
        whole = ClientState(query_string=urlencode(state.link_query(seat, present)),
                            page_script_hash=page_hash)
        with self.lock:
            self.opened.add(session_id)
            self.pages[session_id] = (page_hash, time.monotonic())
        return whole

    def _page_hash(self, session, page: str) -> str | None:
        """A page file (relative to the app root) -> its page script hash in this app."""
        if page not in self.hashes:
            manager = getattr(session, "_pages_manager", None)
            if manager is None:
                return None
            path = os.path.realpath(ROOT / page)
            found = [h for h, info in manager.get_pages().items() if info.get("script_path") == path]
            if not found:
                return None
            self.hashes[page] = found[0]
        return self.hashes[page]

    def page_opened(self, session_id: str) -> bool:
        """Whether this tab was pushed to a page whose address its browser has not had; said once."""
        with self.lock:
            if session_id not in self.opened:
                return False
            self.opened.discard(session_id)
            return True

    def _settled(self, session_id: str, request: ClientState) -> ClientState:
        """A part's rerun; the whole page's if the tab's page changed less than PAGE_SETTLE_S ago."""
        with self.lock:
            page, since = self.pages.get(session_id, ("", -PAGE_SETTLE_S))
        if page == request.page_script_hash and time.monotonic() - since >= PAGE_SETTLE_S:
            return request
        whole = ClientState()
        whole.CopyFrom(request)
        whole.fragment_id = ""
        return whole

    @staticmethod
    def targets(parts: dict[str, ClientState], bar_changed: bool, new_page: bool = False
                ) -> list[tuple[str, float, ClientState, ClientState | None]]:
        """Which parts of a member's page to rerun, and after how long.

        A new page: the bar at once (it opens the page). Otherwise the live part at
        once; the bar after it if it shows something new, or at once with no live part.
        A move (the live part, nothing new in the bar): the live part only.
        """
        bar = parts.get("bar")
        if "live" not in parts or new_page:
            return [("bar", 0.0, bar, None)] if bar is not None else []
        if bar is None:
            return [("live", 0.0, parts["live"], None)]
        live = [("live", 0.0, parts["live"], bar)]
        return live + [("bar", BAR_AFTER_S, bar, None)] if bar_changed else live


@st.cache_resource(show_spinner=False)
def pusher() -> Pusher:
    push = Pusher(class_room())
    push.roll = replicas.start_roll()  # None in one process (no shared class store)
    return push


def watch_class(code: str | None, part: str = "bar", on: bool = True, seat: str | None = None,
                following: bool = False) -> None:
    """From inside a class part (a fragment): rerun it the moment ``code`` changes.

    ``code`` None: this tab is in no class; ``on`` False: not this part any more.
    ``seat`` (from the bar): the tab's seat, kept present while it is connected.
    """
    ctx = get_script_run_ctx()
    fragment_id = ThreadState.get().fragment_id  # the running fragment, as Streamlit 1.67 keeps it
    if ctx is None or not fragment_id or not Runtime.exists():
        return
    rerun = ClientState(query_string=ctx.query_string, page_script_hash=ctx.page_script_hash,
                        fragment_id=fragment_id, is_auto_rerun=True) if on else None
    pusher().watch(ctx.session_id, code, part, rerun, seat=seat, following=following)


def _alive():
    """-> whether a session id is still connected to this server (all are, without a runtime)."""
    if not Runtime.exists():
        return lambda session_id: True
    runtime = Runtime.instance()
    return lambda session_id: runtime.get_app_session(session_id) is not None


def latest_state(code: str) -> ClassState | None:
    """From a page: the class as this process's push thread read it a moment ago, or None."""
    return pusher().latest(code) if Runtime.exists() else None


def page_opened() -> bool:
    """From a page's whole run: the push opened this page (``Pusher._page_run``), and the
    browser has the page but not its address yet."""
    ctx = get_script_run_ctx()
    return ctx is not None and Runtime.exists() and pusher().page_opened(ctx.session_id)


def given_state() -> ClassState | None:
    """From the class bar: the class as read to push this run (``Pusher.given_state``), else None."""
    ctx = get_script_run_ctx()
    return pusher().given_state(ctx.session_id) if ctx is not None and Runtime.exists() else None


def move_asked() -> bool:
    """From the class bar: this tab is to reload on another replica (``Pusher.balance``)."""
    ctx = get_script_run_ctx()
    return ctx is not None and Runtime.exists() and pusher().move_asked(ctx.session_id)


def _as_now(session, request: ClientState) -> ClientState:
    """A rerun of a watched part, on the page and address the tab is on now.

    A request keeps the page it was made on; sent after the class bar opened another
    page, it would take the tab back (Streamlit treats a new page hash as a page change:
    the widgets' state is dropped). Seen in bench/class_load.py: a second push right
    after a page change left students showing one page and addressed as another.
    """
    now = getattr(session, "_client_state", None)  # the last run's, as Streamlit 1.67 keeps it
    if not isinstance(now, ClientState) or not now.page_script_hash:
        return request
    main = getattr(getattr(session, "_pages_manager", None), "main_script_hash", None)
    if now.page_script_hash == main and request.page_script_hash:
        # A tab's first run (a load, a reload) starts under the app's main hash and learns
        # its page as it runs; a push sent then (one that waited IDLE_TRIES for the run to
        # end) would name a page the browser never shows, and the browser takes a part's
        # run on another page for a page change: it empties the page, and the part's blocks
        # land in nothing ("Bad delta path", a blank tab). The part's own page, as watched.
        return request
    fresh = ClientState()
    fresh.CopyFrom(request)
    fresh.page_script_hash = now.page_script_hash
    fresh.query_string = now.query_string
    return fresh
