"""Load test: N concurrent real sessions on the Playground, over Streamlit's own websocket.

    python bench/load.py [--sessions 1 10 30] [--moves 6] [--pattern burst|stagger]
                         [--watch] [--keep-log]

Exit status 1 when a target is missed (N >= 30: p95 <= 2 s, no errors,
RSS <= 1.5 GB; any N: cold start <= 6 s).

For each N the script starts a fresh ``streamlit run app.py`` on 127.0.0.1 and a
free port (nothing else is contacted), measures the cold start, opens N sessions
on /playground the way the browser does, and has each one move sliders K times.
It stops the server itself before the next N.

How a session talks (what the browser sends, mirrored from the 1.67 frontend):

- GET /playground (the HTML; gives the ``_streamlit_xsrf`` cookie), then a
  websocket to ``/_stcore/stream`` with subprotocols ``streamlit, <xsrf token>``;
- a ``rerun_script`` BackMsg: query string, the states of every widget the page
  has drawn so far, ``page_name="playground"`` on the first run and the page's
  script hash afterwards, and the browser's context info;
- the server answers with ForwardMsgs (new_session, deltas, ...,
  script_finished). A slider move is the same BackMsg with the slider's new
  value in its widget state (``double_array_value``), as the frontend sends it.

Measured per move: the time from sending the BackMsg to receiving
``script_finished`` (what the learner waits for, minus the browser's drawing),
and the Playground's own "This page update" metric (server-side work inside the
script, so the difference is queueing: GIL, threads, websocket). Errors are:
exception elements or ``st.error`` alerts in the deltas, runs without a graph,
runs that did not finish successfully, timeouts, and disconnects; the server's
log is scanned for tracebacks. The server's RSS (``VmRSS`` of the streamlit
process) is sampled every 0.1 s; ``VmHWM`` (the kernel's own peak) is printed
too.

Moves: ``burst`` (default) has every session move at the same moment (plus up to
``--jitter`` s), round after round: the classroom's "everyone drag T to 40 now",
the worst case. ``stagger`` lets each session move after its own 0.5-2 s pause.
Of each six moves, four change T, one the hidden size and one the layer count.
The first goes to a T all sessions share (one session computes it, the others
hit the cache); the other T moves go to values of the session's own (usually
uncached), and the hidden size is one of four values, so some sessions share it.

The server runs without Streamlit's file watcher, as hosted (``--watch`` turns
it on: then a source file saved during the run makes Streamlit unload modules
that other sessions are importing, and runs fail with ``KeyError`` on
``sys.modules``).

The client runs on the same machine as the server, so on a small box it takes
some CPU from the server: figures are an upper bound on what remote learners
would see, and noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import http.cookies
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

PAGE = "playground"
TARGETS = {"p95_s": 2.0, "rss_mb": 1536.0, "cold_s": 6.0}
SHARED_SEQ = (8, 20, 40, 60, 100, 150, 30, 80)   # values every session visits
FINISHED_OK = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)


# --------------------------------------------------------------------------- server

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` on loopback, its log in a temp file, its RSS sampled."""

    def __init__(self, port: int, watch: bool = False):
        self.port = port
        self.log = tempfile.NamedTemporaryFile("w+", prefix="stockdemo-load-", suffix=".log",
                                               delete=False)
        self.t_start = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
             "--server.headless", "true", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             # As hosted (see docs/hosting.md): no file watcher. With it on, a file
             # saved during the run makes Streamlit drop modules from sys.modules
             # while other sessions' threads import them (seen: KeyError).
             "--server.fileWatcherType", "auto" if watch else "none"],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, text=True,
        )
        self.rss_samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _status(self, field_name: str) -> float | None:
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(field_name + ":"):
                        return int(line.split()[1]) / 1024  # kB -> MB
        except OSError:
            return None
        return None

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            rss = self._status("VmRSS")
            if rss is not None:
                self.rss_samples.append((time.monotonic(), rss))

    def rss_now(self) -> float:
        return self._status("VmRSS") or float("nan")

    def peak_rss(self, since: float = 0.0) -> float:
        values = [r for t, r in self.rss_samples if t >= since]
        return max(values) if values else float("nan")

    def cpu_s(self) -> float:
        """User + system CPU seconds the server process has used so far."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return float("nan")

    def hwm(self) -> float:
        return self._status("VmHWM") or float("nan")

    def wait_healthy(self, timeout: float = 60.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early, see {self.log.name}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health",
                                            timeout=1):
                    return time.monotonic() - self.t_start
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"streamlit did not answer /_stcore/health in {timeout:.0f} s")

    def stop(self) -> None:
        self._stop.set()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.flush()

    def log_problems(self) -> list[str]:
        """Error/warning lines of the server log, with the first traceback in full."""
        lines = Path(self.log.name).read_text(errors="replace").splitlines()
        out, first_tb = [], True
        for i, ln in enumerate(lines):
            if ln.startswith("Traceback") and first_tb:
                first_tb = False
                block = [ln]
                for nxt in lines[i + 1:i + 40]:
                    block.append(nxt)
                    if nxt and not nxt.startswith((" ", "Traceback", "During", "The above")):
                        break
                out.extend(block)
            elif re.search(r"Traceback|Error|Exception|WARNING", ln):
                out.append(ln)
        return out


# --------------------------------------------------------------------------- session

@dataclass
class RunOutcome:
    seconds: float
    ok: bool
    errors: list[str] = field(default_factory=list)
    page_ms: float | None = None       # the page's own "This page update" metric
    after_graph: float | None = None   # s from the graph element to script_finished
    nodes: str | None = None
    first_of_config: bool = False      # first request of this config in this server


class SessionError(Exception):
    pass


class Session:
    """One learner's tab: a websocket, the widget states the frontend would hold."""

    def __init__(self, port: int, run_timeout: float):
        self.port = port
        self.run_timeout = run_timeout
        self.ws = None
        self.page_hash = ""
        self.widgets: dict[str, WidgetState] = {}   # id -> state, in draw order
        self.key_to_id: dict[str, str] = {}
        self.query: dict[str, str] = {}
        self.fragment_of: dict[str, str] = {}  # widget id -> the fragment that drew it
        self.rerun_fragment = ""  # as the frontend: a widget in a fragment reruns only it

    async def open(self) -> None:
        base = f"http://127.0.0.1:{self.port}"
        xsrf = await asyncio.to_thread(self._get_page, f"{base}/{PAGE}")
        protocols = ["streamlit"] + ([xsrf] if xsrf else [])
        self.ws = await asyncio.wait_for(connect(
            f"ws://127.0.0.1:{self.port}/_stcore/stream", subprotocols=protocols,
            origin=base, max_size=64 * 2**20, ping_interval=None,
            additional_headers={"Cookie": f"_streamlit_xsrf={xsrf}"} if xsrf else None,
        ), timeout=self.run_timeout)

    @staticmethod
    def _get_page(url: str) -> str | None:
        with urllib.request.urlopen(url, timeout=30) as r:
            r.read()
            cookies = http.cookies.SimpleCookie()
            for header in r.headers.get_all("Set-Cookie") or []:
                cookies.load(header)
        morsel = cookies.get("_streamlit_xsrf")
        return morsel.value if morsel else None

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    def _rerun_msg(self) -> BackMsg:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = "&".join(f"{k}={v}" for k, v in self.query.items())
        cs.widget_states.widgets.extend(self.widgets.values())
        if self.rerun_fragment:
            cs.fragment_id = self.rerun_fragment
        if self.page_hash:
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = PAGE
        ci = cs.context_info
        ci.timezone = "UTC"
        ci.timezone_offset = 0
        ci.locale = "en-US"
        ci.url = f"http://127.0.0.1:{self.port}/{PAGE}"
        ci.is_embedded = False
        ci.color_scheme = "light"
        return msg

    def _see_element(self, el, fragment_id: str = "") -> None:
        """Record a widget's state as the frontend would after drawing it."""
        kind = el.WhichOneof("type")
        if kind not in ("slider", "selectbox", "number_input"):
            return
        w = getattr(el, kind)
        if fragment_id:
            self.fragment_of[w.id] = fragment_id
        state = self.widgets.get(w.id)
        if state is not None and not w.set_value:
            return  # the frontend keeps the value the user set
        state = WidgetState(id=w.id)
        if kind == "slider":
            state.double_array_value.data.extend(list(w.value) if w.set_value else list(w.default))
        elif kind == "selectbox":
            state.string_value = w.raw_value if w.set_value else w.options[w.default]
        else:
            state.double_value = w.value if w.set_value else w.default
        self.widgets[w.id] = state
        key = w.id.rsplit("-", 1)[-1]
        self.key_to_id[key] = w.id

    def slider_value(self, key: str) -> int:
        return int(self.widgets[self.key_to_id[key]].double_array_value.data[0])

    def set_slider(self, key: str, value: int) -> None:
        wid = self.key_to_id[key]
        state = WidgetState(id=wid)
        state.double_array_value.data.append(float(value))
        self.widgets[wid] = state
        self.query[key] = str(value)   # the frontend rewrites the URL of a bound widget
        self.rerun_fragment = self.fragment_of.get(wid, "")

    async def run(self) -> RunOutcome:
        """Send a rerun and read ForwardMsgs until this run's script_finished."""
        t0 = time.perf_counter()
        await self.ws.send(self._rerun_msg().SerializeToString())
        errors: list[str] = []
        page_ms = nodes = None
        saw_graph = False
        t_graph = None
        deadline = t0 + self.run_timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError
            data = await asyncio.wait_for(self.ws.recv(), timeout=left)
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "new_session" and msg.new_session.page_script_hash:
                self.page_hash = msg.new_session.page_script_hash
            elif kind == "navigation" and msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash   # the page this run drew
            elif kind == "page_info_changed":
                qs = msg.page_info_changed.query_string
                self.query = dict(p.split("=", 1) for p in qs.split("&") if "=" in p)
            elif kind == "ref_hash":
                saw_graph = True  # a cached big message (graph/plot) the client holds
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                etype = el.WhichOneof("type")
                if etype == "exception":
                    errors.append(f"exception: {el.exception.type}: {el.exception.message[:200]}")
                elif etype == "alert" and el.alert.format == el.alert.ERROR:
                    errors.append(f"st.error: {el.alert.body[:200]}")
                elif etype == "graphviz_chart":
                    saw_graph = True
                    t_graph = time.perf_counter()
                elif etype == "metric":
                    if el.metric.label == "This page update":
                        page_ms = float(el.metric.body.split()[0].replace(",", ""))
                    elif el.metric.label == "Graph nodes":
                        nodes = el.metric.body
                self._see_element(el, msg.delta.fragment_id)
            elif kind == "script_finished":
                status = msg.script_finished
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                seconds = time.perf_counter() - t0
                if status not in FINISHED_OK:
                    errors.append(f"script_finished status {status}")
                if not saw_graph:
                    errors.append("run finished without a graph")
                after = None if t_graph is None else time.perf_counter() - t_graph
                return RunOutcome(seconds, not errors, errors, page_ms, after, nodes)


# --------------------------------------------------------------------------- plan

def plan_moves(idx: int, moves: int, seed: int) -> list[tuple[str, int | None]]:
    """(slider key, value or None = pick at move time): distinct seq_len values per session."""
    rng = random.Random(seed * 1000 + idx)
    kinds = ("seq_len", "seq_len", "hidden_size", "seq_len", "num_layers", "seq_len")
    plan, used = [], {5}
    for j in range(moves):
        key = kinds[j % len(kinds)]
        if key == "seq_len":
            if j % 2 == 0:
                value = SHARED_SEQ[(j // 2) % len(SHARED_SEQ)]
            else:
                value = rng.randint(2, 200)
            while value in used:
                value = rng.randint(2, 200)
            used.add(value)
        elif key == "hidden_size":
            value = rng.choice((16, 32, 64, 128))
        else:
            value = None  # a layer count different from the current one
        plan.append((key, value))
    return plan


@dataclass
class LoadResult:
    n: int
    health_s: float
    cold_s: float
    cold_errors: list[str]
    rest_rss: float
    moves: list[RunOutcome] = field(default_factory=list)
    first_loads: list[RunOutcome] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)   # timeouts, disconnects
    peak_rss: float = float("nan")
    hwm: float = float("nan")
    wall_s: float = 0.0
    server_cpu_s: float = float("nan")
    client_cpu_s: float = float("nan")
    loadavg: float = float("nan")
    log_problems: list[str] = field(default_factory=list)


async def drive(n: int, args) -> LoadResult:
    port = free_port()
    server = Server(port, watch=args.watch)
    result = LoadResult(n, float("nan"), float("nan"), [], float("nan"))
    try:
        result.health_s = server.wait_healthy()
        # Cold start: process start -> the first page rendered (first script_finished).
        probe = Session(port, args.timeout)
        try:
            await probe.open()
            cold = await probe.run()
            result.cold_s = time.monotonic() - server.t_start
            result.cold_errors = cold.errors
        except (TimeoutError, ConnectionClosed, OSError) as exc:
            result.cold_errors = [f"cold start: {exc!r}"]
            return result
        finally:
            await probe.close()
        await asyncio.sleep(1.0)
        result.rest_rss = server.rss_now()
        t_load = time.monotonic()
        cpu0_server, cpu0_client = server.cpu_s(), time.process_time()
        seen_configs: set[tuple] = set()
        rounds = [asyncio.Event() for _ in range(args.moves)]
        done = [0] * args.moves
        progress = asyncio.Condition()

        async def bump(rounds_done: range) -> None:
            async with progress:
                for j in rounds_done:
                    done[j] += 1
                progress.notify_all()

        async def one(idx: int) -> None:
            s = Session(port, args.timeout)
            rng = random.Random(idx)
            j = -1   # the move under way
            try:
                await s.open()
                out = await s.run()
                result.first_loads.append(out)
                for j, (key, value) in enumerate(plan_moves(idx, args.moves, args.seed)):
                    if args.pattern == "burst":
                        await rounds[j].wait()
                        await asyncio.sleep(rng.uniform(0, args.jitter))
                    else:
                        await asyncio.sleep(rng.uniform(0.5, 2.0))
                    if value is None:
                        value = s.slider_value(key) % 4 + 1
                    s.set_slider(key, value)
                    config = tuple(s.slider_value(k) for k in ("seq_len", "hidden_size",
                                                               "num_layers"))
                    first = config not in seen_configs
                    seen_configs.add(config)
                    out = await s.run()
                    out.first_of_config = first
                    result.moves.append(out)
                    await bump(range(j, j + 1))
            except TimeoutError:
                result.failures.append(f"session {idx}: timeout after {args.timeout:.0f} s "
                                       f"(move {j + 1}; 0 = first load)")
                await bump(range(max(j, 0), args.moves))
            except (ConnectionClosed, OSError) as exc:
                result.failures.append(f"session {idx}: disconnected ({exc!r}) at move {j + 1}")
                await bump(range(max(j, 0), args.moves))
            except Exception as exc:  # e.g. a page that failed before drawing its sliders
                result.failures.append(f"session {idx}: gave up at move {j + 1}: {exc!r}")
                await bump(range(max(j, 0), args.moves))
            finally:
                await s.close()

        tasks = [asyncio.create_task(one(i)) for i in range(n)]
        if args.pattern == "burst":
            # Open every session first (the class loads the link), then move together.
            await asyncio.sleep(0)
            deadline = time.monotonic() + args.timeout * (args.moves + 2)
            while len(result.first_loads) + len(result.failures) < n and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            for j in range(args.moves):
                await asyncio.sleep(args.pause)
                rounds[j].set()
                async with progress:
                    try:
                        await asyncio.wait_for(progress.wait_for(lambda j=j: done[j] >= n),
                                               timeout=args.timeout * 2)
                    except TimeoutError:
                        result.failures.append(f"round {j + 1}: not all sessions finished")
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.timeout * (args.moves + 3))
        except TimeoutError:
            result.failures.append("sessions still running at the overall time limit")
        result.wall_s = time.monotonic() - t_load
        result.server_cpu_s = server.cpu_s() - cpu0_server
        result.client_cpu_s = time.process_time() - cpu0_client
        result.loadavg = os.getloadavg()[0]
        result.peak_rss = server.peak_rss(since=t_load)
        result.hwm = server.hwm()
        return result
    finally:
        server.stop()
        result.log_problems = server.log_problems()
        if not args.keep_log:
            os.unlink(server.log.name)


# --------------------------------------------------------------------------- report

def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def report(results: list[LoadResult], args) -> int:
    print()
    print(f"stockdemo load test: Playground, {args.moves} slider moves per session, "
          f"pattern {args.pattern}"
          + (f" (all sessions within {args.jitter} s)" if args.pattern == "burst" else "")
          + f", file watcher {'on' if args.watch else 'off'}")
    print("Seconds from a slider change to script_finished. Client and server share this "
          "2-core machine; figures are noisy.")
    head = (f"{'N':>3} {'moves':>5} {'p50':>6} {'p95':>6} {'max':>6} {'p95new':>6} "
            f"{'p95hit':>6} {'core50':>6} {'tail50':>6} {'load95':>6} {'errors':>6} "
            f"{'RSSrest':>7} {'RSSpeak':>7} {'HWM':>6} {'cold':>5}")
    print(head)
    print("-" * len(head))
    failed = False
    for r in results:
        t = [m.seconds for m in r.moves]
        new = [m.seconds for m in r.moves if m.first_of_config]
        hit = [m.seconds for m in r.moves if not m.first_of_config]
        core = [m.page_ms / 1e3 for m in r.moves if m.page_ms is not None]
        tail = [m.after_graph for m in r.moves if m.after_graph is not None]
        loads = [m.seconds for m in r.first_loads]
        errs = (sum(not m.ok for m in r.moves + r.first_loads) + len(r.failures)
                + len(r.cold_errors))
        print(f"{r.n:>3} {len(t):>5} {pct(t, 50):>6.2f} {pct(t, 95):>6.2f} "
              f"{max(t, default=float('nan')):>6.2f} {pct(new, 95):>6.2f} {pct(hit, 95):>6.2f} "
              f"{pct(core, 50):>6.3f} {pct(tail, 50):>6.2f} {pct(loads, 95):>6.2f} {errs:>6} "
              f"{r.rest_rss:>6.0f}M {r.peak_rss:>6.0f}M {r.hwm:>5.0f}M {r.cold_s:>5.1f}")
        if r.n >= 30:
            failed |= bool(pct(t, 95) > TARGETS["p95_s"] or errs or r.hwm > TARGETS["rss_mb"]
                           or len(t) < r.n * args.moves)
        failed |= r.cold_s > TARGETS["cold_s"]
    print()
    for r in results:
        print(f"N={r.n}: load phase {r.wall_s:.1f} s wall; CPU used: server "
              f"{r.server_cpu_s:.1f} s ({r.server_cpu_s / max(r.wall_s, 1e-9):.2f} cores), "
              f"this client {r.client_cpu_s:.1f} s; 1-min load average at the end "
              f"{r.loadavg:.1f} (everyone's work on the machine)")
    print(f"""
p95new/p95hit: moves to a config no session had run yet / to one already run (cached).
core50: the page's own "This page update" metric (cached_run + cached_render only).
tail50: from the graph element to script_finished (plots, tabs, size sweep, code).
load95: each session's first page load. RSSrest: after the cold start, before the
sessions; RSSpeak: VmRSS sampled every 0.1 s during the load; HWM: the kernel's VmHWM.
cold: process start -> first Playground run finished; /_stcore/health answered after
{", ".join(f"{r.health_s:.1f} s" for r in results)}.
Targets: N=30 p95 <= {TARGETS["p95_s"]} s, 0 errors, RSS <= {TARGETS["rss_mb"] / 1024:.1f} GB; \
cold start <= {TARGETS["cold_s"]} s.""")
    for r in results:
        problems = [e for m in r.moves + r.first_loads for e in m.errors] + r.failures + \
            r.cold_errors
        if problems:
            print(f"\nN={r.n}: {len(problems)} error(s); first ones:")
            for p in problems[:8]:
                print("   ", p)
        if r.log_problems:
            print(f"\nN={r.n}: server log, lines with errors or warnings:")
            for line in r.log_problems[:40]:
                print("   ", line[:200])
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 10, 30])
    ap.add_argument("--moves", type=int, default=6, help="slider moves per session")
    ap.add_argument("--pattern", choices=("burst", "stagger"), default="burst")
    ap.add_argument("--jitter", type=float, default=0.5, help="burst: spread of one round, s")
    ap.add_argument("--pause", type=float, default=1.0, help="burst: pause between rounds, s")
    ap.add_argument("--timeout", type=float, default=60.0, help="per run, s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--watch", action="store_true",
                    help="keep Streamlit's file watcher on (default off, as hosted)")
    ap.add_argument("--keep-log", action="store_true", help="keep the server log (temp file)")
    args = ap.parse_args()
    if not 1 <= args.moves <= 50 or not all(1 <= n <= 100 for n in args.sessions):
        ap.error("--moves must be 1..50 and --sessions 1..100")
    results = []
    for n in args.sessions:
        print(f"N={n}: starting a fresh server and {n} session(s)...", flush=True)
        results.append(asyncio.run(drive(n, args)))
    return report(results, args)


if __name__ == "__main__":
    sys.exit(main())
