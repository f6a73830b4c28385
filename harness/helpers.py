"""What tests and benchmarks share: paths, a free port, the app's server, reading a page back.

No ``stockdemo`` import here: a benchmark that measures the server from outside
(bench/load.py) can use it without loading torch into its own process.
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("STOCKDEMO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
    "--no-first-run", "--disable-quic",
]


def page_paths() -> dict[str, str]:
    """Every page's URL path -> its file relative to the app root: "/" is app.py, "/NAME" pages/NAME.py."""
    return {"/": "app.py", **{f"/{p.stem}": f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))}}


def cold_caches() -> None:
    """st.cache_* and the app's own held caches emptied: they are shared by every AppTest in the
    process, so a test that depends on a cold cache starts here."""
    import streamlit as st

    from stockdemo.ui.caches import clear_held

    st.cache_data.clear()
    st.cache_resource.clear()
    clear_held()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(port: int, *options: str, script: Path = ROOT / "app.py") -> list[str]:
    """``streamlit run app.py`` (or ``script``) on loopback at ``port``, headless; ``options`` at the end."""
    return [sys.executable, "-m", "streamlit", "run", str(script),
            "--server.headless", "true", "--server.port", str(port),
            "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", *options]


# How often wait_until looks again: short beside what it waits for (a process, a port, a state).
POLL_S = 0.05


def wait_until(condition: Callable[[], object], timeout: float, what: str, interval: float = POLL_S):
    """Poll ``condition`` until it returns something true -> that value; past ``timeout`` s, fail.

    ``condition`` may raise OSError (a port not open yet): that counts as not yet.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except OSError:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)  # the poll's tick: the one pause every wait for a condition shares


def alive(pid: int) -> bool:
    """Is process ``pid`` running (neither gone nor a zombie waiting to be reaped)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_healthy(proc: subprocess.Popen, port: int, timeout: float = 60.0) -> float:
    """Wait until the server answers /_stcore/health -> seconds waited. Raises if it exits or hangs."""
    started = time.monotonic()

    def healthy() -> bool:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise RuntimeError(f"streamlit exited early:\n{out}")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1):
            return True

    try:
        wait_until(healthy, timeout, "streamlit answering /_stcore/health")
    except AssertionError:
        proc.kill()
        raise RuntimeError(f"streamlit did not answer on /_stcore/health within {timeout:.0f} s") from None
    return time.monotonic() - started


def start_server(port: int, *options: str, script: Path = ROOT / "app.py",
                 env: Mapping[str, str] | None = None) -> subprocess.Popen:
    """Start the app (or ``script``) as a user would, ``env`` added to its environment, and
    wait until it answers."""
    proc = subprocess.Popen(server_command(port, *options, script=script), cwd=ROOT,
                            env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_healthy(proc, port)
    return proc


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def command_lines(runs: Mapping[str, list[str]], timeout: float = 300,
                  ) -> dict[str, subprocess.CompletedProcess]:
    """``python -m stockdemo ARGS`` for each name's ARGS, all started at once -> each finished
    process (text output captured), by name.

    Each is the command line a user runs, alone in its process (its own torch import and fork
    server): started together they share the two cores instead of each one leaving one idle.
    """
    def one(args: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "stockdemo", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=timeout)

    with ThreadPoolExecutor(max(1, len(runs))) as pool:
        return dict(zip(runs, pool.map(one, runs.values()), strict=True))


@contextmanager
def running_server(*options: str) -> Iterator[str]:
    """A server of its own on a free port, for the ``with`` block: yields its base URL."""
    port = free_port()
    proc = start_server(port, *options)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


# What `make run` serves: one replica's app (the stage's and the code's own sockets), without
# its warm-up (so no length is run before the learner asks): (script, environment).
MAKE_RUN = ("deploy/replica_app.py", {"STOCKDEMO_WARM_STAGE": "0"})


@contextmanager
def served_checkout(checkout: Path = ROOT, script: str = "app.py",
                    env: dict[str, str] | None = None) -> Iterator[str]:
    """``streamlit run`` of ``script`` in ``checkout`` (this one, or another's ``git archive``) on a
    free loopback port, its output dropped, for a benchmark: yields its base URL; stopped after."""
    port = free_port()
    proc = subprocess.Popen(server_command(port, script=checkout / script), cwd=checkout,
                            env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_healthy(proc, port)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


_METRIC = re.compile(r'<dt data-testid="sdMetricLabel">(.*?)'
                     r'(?: <span class="sd-help"[^>]*aria-label="([^"]*)".*?</span>)?</dt>'
                     r'<dd data-testid="sdMetricValue">(.*?)</dd>'
                     r'(?:<dd class="sd-delta[^"]*" data-testid="sdMetricDelta">(.*?)</dd>)?')


def _delta_text(delta: int | None) -> str:
    """A figure's change as the page shows it: "↑ +4", "↓ −2", "± 0" ("" for none)."""
    if delta is None:
        return ""
    return f"{'↑ +' if delta > 0 else '↓ −' if delta < 0 else '± '}{abs(delta):,}"


class Figure(NamedTuple):
    """One figure as a page shows it: label, value, change ("" for none), tooltip ("" for none)."""

    label: str
    value: str
    change: str
    help: str


def _metric_rows(at) -> list[Figure]:
    """An AppTest page's figures, from ``ui.metric_row``'s rows and from the run's figures
    a stage's graph view draws (``ui.stage.stage_spec``'s ``figures``)."""
    rows = [Figure(*(html.unescape(part) for part in (label, value, change, tip)))
            for element in at.markdown if 'class="sd-metrics"' in element.value
            for label, tip, value, change in _METRIC.findall(element.value)]
    for element in at.get("bidi_component"):
        if element.proto.json:
            stage = graph_sent(element).get("stage") or {}
            rows += [Figure(f["label"], f["value"], _delta_text(f["delta"]), f["help"] or "")
                     for f in stage.get("figures", ())]
    return rows


def metrics(at) -> dict[str, str]:
    """An AppTest page's metrics, label -> value: ``st.metric`` ones and the figures of ``_metric_rows``."""
    return {**{m.label: m.value for m in at.metric}, **{f.label: f.value for f in _metric_rows(at)}}


def metric_deltas(at) -> dict[str, str]:
    """The changes shown under the page's figures, label -> text (e.g. "↑ +4")."""
    return {f.label: f.change for f in _metric_rows(at) if f.change}


def metric_help(at, label: str) -> str:
    """The tooltip of one of the page's figures."""
    found = [f.help for f in _metric_rows(at) if f.label == label and f.help]
    assert found, f"no metric {label!r} with a tooltip"
    return found[0]


def metric(at, label: str) -> str:
    """An AppTest page's metric value, by the metric's label."""
    return metrics(at)[label]


def graph_sent(element) -> dict:
    """What one graph view element was sent: its JSON text (stockdemo/ui/graph_view.py), parsed."""
    return json.loads(json.loads(element.proto.json))


def plotly_values(v) -> np.ndarray:
    """Plotly 6+ ships arrays as base64 {dtype, bdata, shape}; older ones as lists."""
    if isinstance(v, dict) and "bdata" in v:
        array = np.frombuffer(base64.b64decode(v["bdata"]), v["dtype"])
        return array.reshape([int(n) for n in str(v["shape"]).split(",")]) if "shape" in v else array
    return np.asarray(v)


def run_async(coro):
    """asyncio.run on a thread of its own -> the coroutine's result (its exception re-raised).

    In the full suite Playwright's sync browser, a session fixture, keeps an event
    loop running on the main thread, where asyncio.run refuses to start another.
    """
    out: dict[str, object] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(coro)
        except BaseException as err:  # handed to the caller's thread
            out["error"] = err

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


def view_element(at, key: str = "graph"):
    """The graph view component keyed ``key`` on an AppTest page."""
    found = [e for e in at.get("bidi_component") if e.key == key]
    assert found, f"no graph view keyed {key!r} on the page"
    return found[0]


def send_from_view(at, key: str = "graph", trigger: dict | None = None, **state):
    """Run the page as the browser would after the graph view ``key`` set ``state`` (and fired ``trigger``).

    What the component sends (frontend/graph_view/src/protocol.js): its whole state as
    one JSON value (``selected``, ``knobs``, ``replay``), and its triggers as a list
    of ``{"event", "value"}`` under the component's events id. -> the AppTest, run.
    """
    from streamlit.components.v2.bidi_component.main import _make_trigger_id

    element = next(e for e in at.get("bidi_component") if e.key == key)
    states = at._tree.get_widget_states()
    kept = at.session_state[key] if key in at.session_state else {}
    whole = {name: kept[name] for name in ("selected", "knobs", "replay") if name in kept}
    whole.update(state)
    widget = states.widgets.add()
    widget.id = element.proto.id
    widget.json_value = json.dumps(whole)
    if trigger:
        events = states.widgets.add()
        events.id = _make_trigger_id(element.proto.id, "events")
        events.json_trigger_value = json.dumps([{"event": k, "value": v} for k, v in trigger.items()])
    return at._run(states)


def move_stage(at, **values):
    """Move the stage's controls (``seq_len=6``...) as a drag does: one request, then settled.

    "Settled" is the panels' listener's trigger (``stockdemo.ui.stage_watch.settle_listener``),
    fired by the stage's browser code once the learner stops.
    """
    req = int(graph_sent(view_element(at))["stage"]["req"]) + 1
    send_from_view(at, knobs={**stage_values(at), **values, "req": req})
    return send_from_view(at, key="stage_settled", trigger={"settled": req})


def stage_values(at) -> dict[str, object]:
    """The values the stage's strip shows, by knob name."""
    return {c["name"]: c["value"] for c in graph_sent(view_element(at))["stage"]["controls"]}
