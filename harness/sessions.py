"""Real sessions over Streamlit's own websocket, as a browser opens them: the load benchmarks'
client (bench/load.py, bench/class_load.py) and the tests that drive ``make serve``.

``Session`` opens a page, moves its controls and reads what came back (how it talks is
bench/load.py's docstring); ``SourceSession`` does it from a loopback address of its own.
The app they talk to is harness/servers.py's ``Target``; harness/measures.py counts what happened.
"""

from __future__ import annotations

import asyncio
import http.cookies
import json
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from harness.helpers import page_paths

MAX_SESSIONS = 400  # a lecture hall of 300, and some
PAGE_BUTTONS = {"": "run_seed", "lesson": "lesson_reveal"}  # pages without sliders
# What a learner moves: the model's sliders, and on the Lab its experiments' own.
SLIDERS = {"seq_len": (2, 60), "hidden_size": (8, 64), "num_layers": (1, 3),
           "weeks": (2, 16), "lab_t": (1, 30), "batches": (2, 12), "max_t": (5, 100)}
SHARED_SEQ = (8, 20, 40, 60, 100, 150, 30, 80)  # Playground: values every session visits
FINISHED_OK = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
SETTLE_S = 0.3  # the browser's pause before "settled" (frontend/graph_view/src/pacing.js)


def page_names() -> list[str]:
    """Every page's URL name, Home as "" (as Streamlit's page_name), Lab included once it exists."""
    return [path.lstrip("/") for path in page_paths()]


# --------------------------------------------------------------------------- session

@dataclass
class RunOutcome:
    seconds: float
    ok: bool
    errors: list[str] = field(default_factory=list)
    first_of_config: bool = False
    progress: list[tuple[float, str]] = field(default_factory=list)  # (s after send, bar text)
    finished_at: float = 0.0  # time.monotonic() at script_finished


class Session:
    """One learner's tab: cookies, a websocket, the widget states the frontend would hold."""

    use_stage_socket = True  # False: every stage move is a run, as in class mode or under make run

    def __init__(self, base: str, page: str, run_timeout: float = 60.0, query: dict | None = None):
        self.base = base
        self.page = page
        self.run_timeout = run_timeout
        self.ws = None
        self.cookies: dict[str, str] = {}
        self.session_id = ""  # Streamlit's, as its frontend learns it (a reconnect names it)
        self.page_hash = ""
        self.widgets: dict[str, WidgetState] = {}  # id -> state, in draw order
        self.key_to_id: dict[str, str] = {}
        self.kind_of: dict[str, str] = {}
        self.bounds: dict[str, tuple[float, float]] = {}
        self.defaults: dict[str, float] = {}  # slider key -> its default, as the page declares it
        self.query: dict[str, str] = dict(query or {})
        self.fragment_of: dict[str, str] = {}  # widget id -> the fragment that drew it
        self.rerun_fragment = ""  # as the frontend: a widget in a fragment reruns only it
        self.triggers: list[str] = []
        self.json_triggers: list[WidgetState] = []
        # The stage (stockdemo/ui/stage.py): the graph view's own controls, as its browser
        # code holds them: the component's id and fragment, the values, the last request.
        self.stage: dict | None = None
        self.settler: tuple[str, str] = ("", "")  # the panels' listener: its events id, its fragment
        self.direct_move: dict | None = None  # a stage move for the stage's socket, not yet sent
        self.stage_ws = None  # (address, websocket): the stage's socket, once a move went there
        self.direct_off: str | None = None  # the socket address that failed: moves are runs again
        self.direct_failures: list[str] = []
        self.direct_moves = 0
        self.graphs: list[tuple[float, str, int]] = []  # (time, picture key, stage req) drawn

    @property
    def replica(self) -> str | None:
        """The replica HAProxy's cookie sends this session to (None: one process)."""
        return self.cookies.get("SRV")

    async def open(self) -> None:
        await asyncio.to_thread(self._get_page)
        protocols = ["streamlit"] + ([self.cookies["_streamlit_xsrf"]]
                                     if "_streamlit_xsrf" in self.cookies else [])
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        ws_base = self.base.replace("http://", "ws://")
        self.ws = await asyncio.wait_for(connect(
            f"{ws_base}/_stcore/stream", subprotocols=protocols, origin=self.base,
            max_size=64 * 2**20, ping_interval=None,
            additional_headers={"Cookie": cookie} if cookie else None,
        ), timeout=self.run_timeout)

    def _get_page(self) -> None:
        """GET the page, then, as the browser, its first health check, whose answer sets Streamlit's
        XSRF cookie (HAProxy answers a browser that has it, and a replica lets it back in when full)."""
        qs = "&".join(f"{k}={v}" for k, v in self.query.items())
        self._get(f"/{self.page}" + (f"?{qs}" if qs else ""))
        if "_streamlit_xsrf" not in self.cookies:
            self._get("/_stcore/health")

    def _get(self, path: str) -> None:
        request = urllib.request.Request(self.base + path)
        if self.cookies:
            request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        with urllib.request.urlopen(request, timeout=30) as r:
            r.read()
            jar = http.cookies.SimpleCookie()
            for header in r.headers.get_all("Set-Cookie") or []:
                jar.load(header)
        self.cookies.update({k: m.value for k, m in jar.items()})
        for k, m in jar.items():
            if m["max-age"] == "0":  # expired (a full replica's page ends the affinity)
                self.cookies.pop(k, None)

    async def reconnect(self) -> None:
        """As the browser after a lost connection: same cookies and URL, widget states from the URL."""
        await self.close()
        self.page_hash = ""
        self.widgets.clear()
        self.rerun_fragment = ""
        await self.open()

    async def close(self) -> None:
        await self._close_direct()
        if self.ws is not None:
            await self.ws.close()

    def _rerun_msg(self) -> BackMsg:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = "&".join(f"{k}={v}" for k, v in self.query.items())
        cs.widget_states.widgets.extend(self.widgets.values())
        for wid in self.triggers:
            cs.widget_states.widgets.append(WidgetState(id=wid, trigger_value=True))
        cs.widget_states.widgets.extend(self.json_triggers)
        self.triggers = []
        self.json_triggers = []
        if self.rerun_fragment:
            cs.fragment_id = self.rerun_fragment
        if self.page_hash:
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = self.page
        ci = cs.context_info
        ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
        ci.url = f"{self.base}/{self.page}"
        ci.is_embedded = False
        ci.color_scheme = "light"
        return msg

    def _see_element(self, el, fragment_id: str = "") -> None:
        """Record a widget's state as the frontend would after drawing it."""
        kind = el.WhichOneof("type")
        if kind == "bidi_component":
            self._see_view(el.bidi_component, fragment_id)
            return
        if kind not in ("slider", "selectbox", "number_input", "button"):
            return
        w = getattr(el, kind)
        key = w.id.rsplit("-", 1)[-1]
        self.key_to_id[key] = w.id
        self.kind_of[w.id] = kind
        if fragment_id:
            self.fragment_of[w.id] = fragment_id
        if kind == "button":
            return
        if kind in ("slider", "number_input"):
            self.bounds[w.id] = (w.min, w.max)
        if kind == "slider":
            self.defaults[key] = w.default[0]
        state = self.widgets.get(w.id)
        if state is not None and not w.set_value:
            return  # the frontend keeps the value the user set
        state = WidgetState(id=w.id)
        if kind == "slider":
            state.double_array_value.data.extend(list(w.value) if w.set_value else list(w.default))
        elif kind == "selectbox":
            state.string_value = w.raw_value if w.set_value else w.options[w.default]
        elif w.data_type == w.INT:
            state.int_value = int(w.value if w.set_value else w.default)
        else:
            state.double_value = w.value if w.set_value else w.default
        self.widgets[w.id] = state

    def _see_view(self, view, fragment_id: str) -> None:
        """A graph view drawn: its picture (for counting graphs), and its stage, if it has one."""
        if view.component_name.endswith("stockdemo_settle"):  # the panels' listener (ui.stage_watch)
            from streamlit.components.v2.bidi_component.main import _make_trigger_id

            self.settler = (_make_trigger_id(view.id, "events"), fragment_id)
            return
        try:
            payload = json.loads(json.loads(view.json))
        except (ValueError, TypeError):
            return
        self._see_payload(payload, view.id, fragment_id)

    def _see_payload(self, payload: dict, view_id: str, fragment_id: str) -> None:
        """A graph view's payload drawn (from a run, or from the stage's socket)."""
        stage = payload.get("stage") if isinstance(payload, dict) else None
        req = int(stage["req"]) if stage else -1
        self.graphs.append((time.perf_counter(), str(payload.get("graph")), req))
        if not stage:
            return
        values = {c["name"]: c["value"] for c in stage["controls"]}
        mine = self.stage
        if mine is None or mine["id"] != view_id:
            from streamlit.components.v2.bidi_component.main import _make_trigger_id

            mine = self.stage = {"id": view_id, "events": _make_trigger_id(view_id, "events"),
                                 "values": values, "req": int(stage["req"]), "state": {}}
            self.key_to_id.update({name: view_id for name in values})
        mine["fragment"] = fragment_id
        mine["locked"] = bool(stage.get("locked"))  # following a class's teacher
        mine["direct"] = stage.get("direct")  # the stage's socket for the next move, if offered
        mine["answered"] = int(stage["req"])
        if mine["answered"] >= mine["req"]:
            mine["values"] = values  # nothing of the learner's in flight: the server's values

    def has(self, key: str) -> bool:
        return key in self.key_to_id

    def value(self, key: str) -> float:
        if self.stage is not None and key in self.stage["values"]:
            return self.stage["values"][key]
        state = self.widgets[self.key_to_id[key]]
        kind = state.WhichOneof("value")
        return state.double_array_value.data[0] if kind == "double_array_value" else getattr(state, kind)

    def set_value(self, key: str, value: int) -> None:
        """Move a slider or number box, as a learner does: its state, the URL, its fragment."""
        if self.stage is not None and key in self.stage["values"]:
            self.move_stage(key, value)
            return
        wid = self.key_to_id[key]
        state = WidgetState(id=wid)
        if self.kind_of[wid] == "slider":
            state.double_array_value.data.append(float(value))
        elif self.widgets[wid].WhichOneof("value") == "int_value":
            state.int_value = int(value)
        else:
            state.double_value = float(value)
        self.widgets[wid] = state
        self.query[key] = str(value)  # the frontend rewrites the URL of a bound widget
        self.rerun_fragment = self.fragment_of.get(wid, "")

    def move_stage(self, key: str, value: object) -> None:
        """One value the stage's strip sends (a drag sends every value it crosses): a new request,
        on the stage's socket where its payload offers one (the next ``run`` sends it there),
        else as the component's state, for a run of the stage."""
        stage = self.stage
        stage["values"] = {**stage["values"], key: value}
        stage["req"] = max(stage["req"], stage["answered"]) + 1
        knobs = {**stage["values"], "req": stage["req"]}
        if self.use_stage_socket and stage.get("direct") and stage["direct"] != self.direct_off:
            self.direct_move = knobs
            return
        self._as_state(knobs)

    def _as_state(self, knobs: dict) -> None:
        stage = self.stage
        stage["state"] = {**stage["state"], "knobs": knobs}
        self.widgets[stage["id"]] = WidgetState(id=stage["id"], json_value=json.dumps(stage["state"]))
        self.rerun_fragment = stage["fragment"]  # the URL follows once the learner stops (settle)

    async def _run_direct(self, knobs: dict) -> RunOutcome | None:
        """One move on the stage's socket, as the graph view's browser code sends it
        (frontend/graph_view/src/direct.js); None if the socket failed."""
        url = self.stage["direct"]
        try:
            if self.stage_ws is None or self.stage_ws[0] != url:
                await self._close_direct()
                cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
                ws = await asyncio.wait_for(connect(
                    self.base.replace("http://", "ws://") + url, origin=self.base, max_size=64 * 2**20,
                    ping_interval=None, additional_headers={"Cookie": cookie} if cookie else None,
                ), timeout=self.run_timeout)
                self.stage_ws = (url, ws)
            t0 = time.perf_counter()
            await self.stage_ws[1].send(json.dumps(knobs))
            text = await asyncio.wait_for(self.stage_ws[1].recv(), timeout=self.run_timeout)
            self._see_payload(json.loads(text), self.stage["id"], self.stage["fragment"])
            self.direct_moves += 1
        except (ConnectionClosed, InvalidStatus, OSError, ValueError) as exc:
            self.direct_failures.append(repr(exc)[:200])
            self.direct_off = url
            await self._close_direct()
            return None
        return RunOutcome(time.perf_counter() - t0, True, finished_at=time.monotonic())

    async def _close_direct(self) -> None:
        if self.stage_ws is not None:
            ws, self.stage_ws = self.stage_ws[1], None
            await ws.close()

    def settle(self) -> None:
        """The learner stopped: the panels' listener fires ``settled`` (their fragment reruns),
        naming the picture the stage shows (frontend/graph_view/src/pacing.js, settle)."""
        events, fragment = self.settler
        shown = self.graphs[-1][1] if self.graphs else None
        self.json_triggers.append(WidgetState(id=events, json_trigger_value=json.dumps(
            [{"event": "settled", "value": {"req": self.stage["req"], "graph": shown}}])))
        self.rerun_fragment = fragment

    def press(self, key: str) -> None:
        wid = self.key_to_id[key]
        self.triggers.append(wid)
        self.rerun_fragment = self.fragment_of.get(wid, "")

    async def run(self) -> RunOutcome:
        """Send a rerun and read ForwardMsgs until this run's script_finished; or the stage's move
        on its socket, where that is where the browser sends it (``move_stage``)."""
        if self.direct_move is not None:
            knobs, self.direct_move = self.direct_move, None
            out = await self._run_direct(knobs)
            if out is not None:
                return out
            self._as_state(knobs)  # the socket failed: the browser sends the same values as a run
        t0 = time.perf_counter()
        await self.ws.send(self._rerun_msg().SerializeToString())
        errors: list[str] = []
        progress: list[tuple[float, str]] = []
        deadline = t0 + self.run_timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError
            data = await asyncio.wait_for(self.ws.recv(), timeout=left)
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.session_id = msg.new_session.initialize.session_id or self.session_id
                self.page_hash = msg.new_session.page_script_hash or self.page_hash
            elif kind == "navigation" and msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash  # the page this run drew
            elif kind == "page_info_changed":
                qs = msg.page_info_changed.query_string
                self.query = dict(p.split("=", 1) for p in qs.split("&") if "=" in p)
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                etype = el.WhichOneof("type")
                if etype == "exception":
                    errors.append(f"exception: {el.exception.type}: {el.exception.message[:200]}")
                elif etype == "alert" and el.alert.format == el.alert.ERROR:
                    errors.append(f"st.error: {el.alert.body[:200]}")
                elif etype == "progress":
                    progress.append((time.perf_counter() - t0, el.progress.text))
                self._see_element(el, msg.delta.fragment_id)
            elif kind == "script_finished":
                status = msg.script_finished
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                seconds = time.perf_counter() - t0
                if status not in FINISHED_OK:
                    errors.append(f"script_finished status {status}")
                self.rerun_fragment = ""
                return RunOutcome(seconds, not errors, errors, progress=progress,
                                  finished_at=time.monotonic())


def nudge(s: Session, rng: random.Random) -> None:
    """One learner's move on any page: a slider a few steps, else the page's button."""
    keys = [k for k in SLIDERS if s.has(k) and s.key_to_id[k] in s.widgets]
    if keys:
        key = rng.choice(keys)
        low, high = SLIDERS[key]
        current = int(s.value(key))
        choices = [v for v in range(low, high + 1) if v != current and abs(v - current) <= 5]
        s.set_value(key, rng.choice(choices or [low]))
    elif s.page in PAGE_BUTTONS and s.has(PAGE_BUTTONS[s.page]):
        s.press(PAGE_BUTTONS[s.page])


def playground_plan(idx: int, moves: int, seed: int, t_only: bool = False) -> list[tuple[str, int | None]]:
    """(slider key, value or None = another layer count): shared and own sequence lengths.

    ``t_only``: every move is T (a lecture's "everyone move T now"), shared and own values in turn.
    """
    rng = random.Random(seed * 1000 + idx)
    kinds = ("seq_len",) if t_only else \
        ("seq_len", "seq_len", "hidden_size", "seq_len", "num_layers", "seq_len")
    plan, used = [], {5}
    for j in range(moves):
        key = kinds[j % len(kinds)]
        value = None
        if key == "seq_len":
            value = SHARED_SEQ[(j // 2) % len(SHARED_SEQ)] if j % 2 == 0 else rng.randint(2, 200)
            while value in used:
                value = rng.randint(2, 200)
            used.add(value)
        elif key == "hidden_size":
            value = rng.choice((16, 32, 64, 128))
        plan.append((key, value))
    return plan



class SourceSession(Session):
    """A learner's tab whose every connection leaves from ``source`` (a loopback address)."""

    def __init__(self, *args, source: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.source = source

    async def open(self) -> None:
        await asyncio.to_thread(self._get_page)
        protocols = ["streamlit"] + ([self.cookies["_streamlit_xsrf"]]
                                     if "_streamlit_xsrf" in self.cookies else [])
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self.ws = await asyncio.wait_for(connect(
            f"{self.base.replace('http://', 'ws://')}/_stcore/stream", subprotocols=protocols,
            origin=self.base, max_size=64 * 2**20, ping_interval=None,
            additional_headers={"Cookie": cookie} if cookie else None,
            local_addr=(self.source, 0)), timeout=self.run_timeout)

    def _get(self, path: str) -> None:
        host, port = self.base.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30, source_address=(self.source, 0))
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        try:
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                raise urllib.error.HTTPError(path, r.status, r.reason, r.headers, None)
            for header in r.headers.get_all("Set-Cookie") or []:
                name, _, rest = header.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        finally:
            conn.close()
