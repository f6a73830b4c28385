"""stockdemo/ui/compat.py, the one door to Streamlit's private internals: pinned and checked.

A Streamlit upgrade fails here first, each test naming the private thing that moved,
instead of silently in a class of sixty (a push that never comes, a progress bar lost).
Before moving the pin, read the failing test's name, fix compat.py, then change
``compat.STREAMLIT_VERSION`` and requirements.txt together.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest
import streamlit
from streamlit import config, type_util
from streamlit import runtime as streamlit_runtime
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import Runtime, app_session, fragment
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.runtime import AsyncObjects
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    FragmentThreadState,
    ScriptRunContext,
    ThreadState,
)
from streamlit.runtime.session_manager import SessionClientDisconnectedError
from streamlit.runtime.state.query_params import QueryParams
from streamlit.runtime.state.session_state import SessionState
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT, free_port, run_async, start_server, stop_server
from stockdemo.ui import compat

PROBE = ROOT / "tests" / "apps" / "compat_probe.py"
LATE = ROOT / "tests" / "apps" / "late_messages.py"


def test_streamlit_is_the_version_compat_was_written_for():
    assert streamlit.__version__ == compat.STREAMLIT_VERSION, (
        f"Streamlit is {streamlit.__version__}; stockdemo/ui/compat.py was written for "
        f"{compat.STREAMLIT_VERSION}: run tests/test_compat.py, fix what it names, then move the pin")
    pinned = re.search(r"^streamlit==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert pinned and pinned[1] == compat.STREAMLIT_VERSION, "requirements.txt pins another Streamlit"


def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


# (what compat.py uses, whether Streamlit still has it): one test each, named by the thing.
PRIVATE = {
    "AppSession._browser_queue (wait_until_sent)":
        lambda: "self._browser_queue = ForwardMsgQueue()" in inspect.getsource(AppSession.__init__),
    "ForwardMsgQueue.is_empty (wait_until_sent)": lambda: callable(ForwardMsgQueue.is_empty),
    "AppSession._client_state (tab_address)":
        lambda: "self._client_state = ClientState()" in inspect.getsource(AppSession.__init__),
    "AppSession._pages_manager (main_script_hash, page_scripts)":
        lambda: "self._pages_manager = PagesManager(" in inspect.getsource(AppSession.__init__),
    "AppSession._scriptrunner (busy)":
        lambda: "self._scriptrunner: ScriptRunner | None = None" in inspect.getsource(AppSession.__init__),
    "AppSession.request_rerun(ClientState) (rerun_session)":
        lambda: list(inspect.signature(AppSession.request_rerun).parameters) == ["self", "client_state"],
    "AppSession.has_fragment (has_fragment)": lambda: callable(AppSession.has_fragment),
    "Runtime._get_async_objs().eventloop (event_loop, wait_until_sent)":
        lambda: callable(Runtime._get_async_objs) and "eventloop" in AsyncObjects._fields,
    "Runtime.exists / instance / get_app_session (runtime_exists, app_session, alive)":
        lambda: all(callable(getattr(Runtime, n)) for n in ("exists", "instance", "get_app_session")),
    "PagesManager.main_script_hash and get_pages (main_script_hash, page_scripts)":
        lambda: isinstance(PagesManager.main_script_hash, property) and callable(PagesManager.get_pages),
    "ThreadState.get().fragment_id (this_fragment_run)":
        lambda: callable(ThreadState.get) and "fragment_id" in _fields(FragmentThreadState),
    "ScriptRunContext fields (this_fragment_run, rerun_fragment, running_page_script)":
        lambda: {"session_id", "query_string", "fragment_storage", "pages_manager", "cached_message_hashes",
                 "context_info", "script_requests"} <= _fields(ScriptRunContext)
        and isinstance(ScriptRunContext.page_script_hash, property),
    "ScriptRequests.request_rerun(RerunData) (rerun_fragment)":
        lambda: list(inspect.signature(ScriptRequests.request_rerun).parameters) == ["self", "new_data"],
    "RerunData fields (rerun_fragment)":
        lambda: {"query_string", "page_script_hash", "fragment_id_queue", "is_fragment_scoped_rerun",
                 "cached_message_hashes", "context_info"} <= _fields(RerunData),
    "ClientState fields (this_fragment_run, tab_address)":
        lambda: {"query_string", "page_script_hash", "fragment_id", "is_auto_rerun"}
        <= set(ClientState.DESCRIPTOR.fields_by_name),
    "app_session._populate_theme_msg(msg, section) (cache_theme_messages)":
        lambda: list(inspect.signature(inspect.unwrap(app_session._populate_theme_msg)).parameters)
        == ["msg", "section"],
    "a fragment's id from its function's __qualname__ and place (fragment_of_its_own)":
        lambda: 'definition_token = f"{func.__module__}.{get_object_name(func)}"'
        in inspect.getsource(fragment._make_fragment_identity)
        and "obj.__qualname__" in inspect.getsource(type_util.get_object_name),
    "QueryParams._initial_query_params, what bound widgets seed from (link_carries)":
        lambda: "_initial_query_params" in _fields(QueryParams)
        and "self._initial_query_params.get(param_key)" in inspect.getsource(QueryParams.get_initial_value)
        and "self.query_params.get_initial_value(user_key)"
        in inspect.getsource(SessionState._handle_query_param_binding),
    "Runtime._session_mgr.get_session_info: a connected or a stored session (holds_session)":
        lambda: "self._session_mgr = " in inspect.getsource(Runtime.__init__)
        and "self._session_storage.get(session_id)"
        in inspect.getsource(WebsocketSessionManager.get_session_info),
    "AppSession.register_file_watchers, gated on the option at creation only (resume_without_watchers)":
        lambda: 'config.get_option("server.fileWatcherType") != "none"'
        in inspect.getsource(AppSession.__init__)
        and "register_file_watchers()" in inspect.getsource(WebsocketSessionManager._resume_stored_session),
    "AppSession: a refused rerun makes a new runner, the old one's events ignored, its SHUTDOWN last "
    "(defer_reruns_behind_finished_runs)":
        lambda: "self._create_scriptrunner(rerun_data)" in inspect.getsource(AppSession.request_rerun)
        and "if sender is not self._scriptrunner:"
        in inspect.getsource(inspect.unwrap(AppSession._handle_scriptrunner_event_on_event_loop))
        and "self._scriptrunner = None" in inspect.getsource(
            inspect.unwrap(AppSession._handle_scriptrunner_event_on_event_loop)),
    "Runtime's flush sends each message with the session list it took first (send_to_the_current_websocket)":
        lambda: "for active_session_info in self._session_mgr.list_active_sessions():"
        in inspect.getsource(Runtime._loop_coroutine)
        and "self._send_message(active_session_info, msg)" in inspect.getsource(Runtime._loop_coroutine)
        and "session_info.client.write_forward_msg(msg)"
        in inspect.getsource(inspect.unwrap(Runtime._send_message)),
    "the script thread's name, ScriptRunner.scriptThread (runs_in_progress)":
        lambda: f'name="{compat.SCRIPT_THREAD}"' in inspect.getsource(script_runner.ScriptRunner),
}


@pytest.mark.parametrize("thing", list(PRIVATE))
def test_each_private_thing_compat_uses_is_still_in_streamlit(thing):
    assert PRIVATE[thing](), f"Streamlit {streamlit.__version__} changed {thing}: see stockdemo/ui/compat.py"


def test_runs_in_progress_counts_streamlits_script_threads_this_run_included():
    def page():
        import streamlit as st

        from stockdemo.ui import compat

        st.markdown(f"runs: {compat.runs_in_progress()}")

    assert compat.runs_in_progress() == 0  # no run here
    at = AppTest.from_function(page).run()
    assert at.markdown[0].value == "runs: 1"
    other = threading.Event()
    thread = threading.Thread(target=other.wait, name=compat.SCRIPT_THREAD)  # another session's run
    thread.start()
    try:
        assert at.run().markdown[0].value == "runs: 2"
    finally:
        other.set()
        thread.join()


THEME_SECTIONS = ("theme", "theme.light", "theme.dark", "theme.sidebar", "theme.light.sidebar",
                  "theme.dark.sidebar")


def _theme_messages(populate) -> list[bytes]:
    out = []
    for section in THEME_SECTIONS:
        msg = CustomThemeConfig()
        populate(msg, section)
        out.append(msg.SerializeToString())
    return out


def test_the_theme_built_once_is_streamlits_own_and_follows_a_changed_option():
    assert compat.cache_theme_messages()  # the facade did it already: a second call keeps it
    cached = app_session._populate_theme_msg
    streamlits = cached.__wrapped__
    assert cached is not streamlits
    assert _theme_messages(cached) == _theme_messages(streamlits)
    assert _theme_messages(cached)[0], "the app's .streamlit/config.toml sets a theme"
    before = config.get_option("theme.primaryColor")
    try:
        config.set_option("theme.primaryColor", "#123456")
        changed = _theme_messages(cached)
        assert changed == _theme_messages(streamlits)
        assert CustomThemeConfig.FromString(changed[0]).primary_color == "#123456"
    finally:
        config.set_option("theme.primaryColor", before)
    assert CustomThemeConfig.FromString(_theme_messages(cached)[0]).primary_color == before


class _Client:
    def write_forward_msg(self, msg) -> None:
        pass


def _resumed_watchers(register) -> tuple[object, object]:
    """A session created, stored and resumed by Streamlit's own session manager, with ``register``
    as ``AppSession.register_file_watchers`` -> its file watcher when new, and once resumed."""
    async def visit() -> tuple[object, object]:
        manager = WebsocketSessionManager(MemorySessionStorage(), MemoryUploadedFileManager("/upload"),
                                          ScriptCache(), None)
        script = ScriptData(str(ROOT / "app.py"), False)
        first = manager.connect_session(_Client(), script, {})
        new = manager.get_active_session_info(first).session._local_sources_watcher
        manager.disconnect_session(first)
        again = manager.connect_session(_Client(), script, {}, existing_session_id=first)
        assert again == first, "the stored session was not resumed"
        resumed = manager.get_active_session_info(again).session._local_sources_watcher
        manager.disconnect_session(again)
        return new, resumed

    original = AppSession.register_file_watchers
    try:
        AppSession.register_file_watchers = register
        return run_async(visit())  # Playwright keeps a loop running on this thread in the full suite
    finally:
        AppSession.register_file_watchers = original


def test_a_resumed_session_watches_no_files_when_the_server_watches_none(monkeypatch):
    assert compat.resume_without_watchers()  # the facade did it already: a second call keeps it
    gated = AppSession.register_file_watchers
    monkeypatch.setattr(config, "get_option", lambda key, _get=config.get_option: (
        "none" if key == "server.fileWatcherType" else _get(key)))
    assert _resumed_watchers(gated) == (None, None)
    # Streamlit's own method watches again on resume: the walk of every module each run.
    new, resumed = _resumed_watchers(inspect.unwrap(gated))
    assert new is None and type(resumed).__name__ == "LocalSourcesWatcher"


def test_a_resumed_session_still_watches_files_when_the_server_watches_them(monkeypatch):
    monkeypatch.setattr(config, "get_option", lambda key, _get=config.get_option: (
        "poll" if key == "server.fileWatcherType" else _get(key)))
    new, resumed = _resumed_watchers(AppSession.register_file_watchers)
    assert type(new).__name__ == type(resumed).__name__ == "LocalSourcesWatcher"


def _race(part_waits_for_the_run: bool, monkeypatch) -> tuple[list[str], list[str]]:
    """A whole run of tests/apps/late_messages.py ends while the event loop is held, and a rerun
    of its fragment comes before the loop has handled that run's events (a timer's tick on a
    busy server) -> (what the browser was sent, as texts, and the runs' ends)."""
    deferred = (AppSession._create_scriptrunner, AppSession._handle_scriptrunner_event_on_event_loop)
    # A run's end tells the server's media and dataframe managers, which only a Runtime has.
    monkeypatch.setattr(streamlit_runtime, "get_instance", lambda: mock.MagicMock())

    async def visit() -> tuple[list[str], list[str]]:
        manager = WebsocketSessionManager(MemorySessionStorage(), MemoryUploadedFileManager("/upload"),
                                          ScriptCache(), None)
        session = manager.get_active_session_info(
            manager.connect_session(_Client(), ScriptData(str(LATE), False), {})).session
        sent: list = []

        async def settled() -> None:  # the runner gone, its messages taken as the server's flush does
            for _ in range(600):
                await asyncio.sleep(0.01)
                sent.extend(session.flush_browser_queue())
                if session._scriptrunner is None:
                    return
            raise TimeoutError("the session's runs never ended")

        session.request_rerun(ClientState())
        await settled()
        (part,) = {m.delta.fragment_id for m in sent if m.WhichOneof("type") == "delta"} - {""}
        session.request_rerun(ClientState())  # whole run 2...
        session._scriptrunner._script_thread.join(30)  # ...over, its events held with the loop
        session.request_rerun(ClientState(fragment_id=part, is_auto_rerun=True))
        await settled()
        manager.disconnect_session(session.id)
        texts = [m.delta.new_element.markdown.body for m in sent
                 if m.WhichOneof("type") == "delta" and m.delta.new_element.HasField("markdown")]
        ends = [ForwardMsg.ScriptFinishedStatus.Name(m.script_finished) for m in sent
                if m.WhichOneof("type") == "script_finished"]
        return texts, ends

    try:
        if not part_waits_for_the_run:
            AppSession._create_scriptrunner, AppSession._handle_scriptrunner_event_on_event_loop = map(
                inspect.unwrap, deferred)
        return run_async(visit())
    finally:
        AppSession._create_scriptrunner, AppSession._handle_scriptrunner_event_on_event_loop = deferred


def test_a_fragment_rerun_before_a_finished_runs_messages_are_handled_waits_and_they_reach_the_browser(
        monkeypatch):
    assert compat.defer_reruns_behind_finished_runs()  # the facade did it already: a second call keeps it
    texts, ends = _race(True, monkeypatch)
    # (The fragment's run takes the place of run 2's "part" if that was not sent yet.)
    assert [t for t in texts if t != "part"] == ["whole run 1", "whole run 2"] and texts[-1] == "part"
    assert ends == ["FINISHED_SUCCESSFULLY", "FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"]
    # Streamlit's own: the fragment's new runner, and the whole run 2 never sent (the tab shows run 1).
    texts, ends = _race(False, monkeypatch)
    assert [t for t in texts if t != "part"] == ["whole run 1"] and texts[-1] == "part"
    assert ends == ["FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"]


class _Gone:
    """The websocket a browser dropped: Streamlit's raises on a write."""

    def write_forward_msg(self, msg) -> None:
        raise SessionClientDisconnectedError


class _Browser:
    def __init__(self) -> None:
        self.got: list = []

    def write_forward_msg(self, msg) -> None:
        self.got.append(msg)


def _sent_after_a_reconnect(send) -> list:
    """The flush's list of sessions taken, then the session reconnects on a new websocket, then
    its message is sent as the flush sends it (``send``: ``Runtime._send_message``) -> what
    the new websocket got."""
    async def visit() -> list:
        manager = WebsocketSessionManager(MemorySessionStorage(), MemoryUploadedFileManager("/upload"),
                                          ScriptCache(), None)
        script = ScriptData(str(LATE), False)
        first = manager.connect_session(_Gone(), script, {})
        flushing = manager.list_active_sessions()  # as Runtime._loop_coroutine takes it
        manager.disconnect_session(first)
        browser = _Browser()
        assert manager.connect_session(browser, script, {}, existing_session_id=first) == first
        msg = ForwardMsg()
        msg.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
        for info in flushing:
            try:
                send(SimpleNamespace(_session_mgr=manager), info, msg)
            except SessionClientDisconnectedError:
                pass  # the flush goes on, as Streamlit's does
        manager.disconnect_session(first)
        return browser.got

    return run_async(visit())


def test_a_message_sent_after_its_session_reconnected_mid_flush_reaches_the_new_websocket():
    assert compat.send_to_the_current_websocket()  # the facade did it already: a second call keeps it
    assert len(_sent_after_a_reconnect(Runtime._send_message)) == 1
    # Streamlit's own: written to the websocket of the flush's list, the closed one, and lost.
    assert _sent_after_a_reconnect(inspect.unwrap(Runtime._send_message)) == []


def test_without_a_server_every_door_says_it_cannot(monkeypatch):
    """Raw mode (a notebook, ``python app.py``): no runtime, no script run."""
    monkeypatch.setattr(Runtime, "_instance", None)
    assert not compat.runtime_exists()
    assert compat.session_id() is None and compat.this_fragment_run() is None
    assert compat.app_session("anyone") is None and compat.alive()("anyone")
    assert not compat.holds_session("anyone")
    assert compat.running_page_script() is None and not compat.rerun_fragment("any")
    assert not compat.wait_until_sent(1.0) and not compat.link_carries("cell", "nn.GRU")


def _seen(out: Path, kind: str) -> list[dict]:
    lines = out.read_text().splitlines() if out.exists() else []
    return [line for line in map(json.loads, lines) if line["kind"] == kind]


def test_on_a_real_server_each_door_opens_and_a_fragment_reruns_from_a_run_and_from_a_thread(
        tmp_path, monkeypatch):
    """The probe page (tests/apps/compat_probe.py) calls every function of compat.py in a real
    session; its fragment must run three times (its own run, compat.rerun_fragment, a push
    from another thread through the server's event loop) and the page once."""
    from harness.sessions import Session

    out = tmp_path / "seen.jsonl"
    monkeypatch.setenv("STOCKDEMO_COMPAT_OUT", str(out))
    port = free_port()
    server = start_server(port, script=PROBE)

    async def visit() -> None:
        session = Session(f"http://127.0.0.1:{port}", "")
        await session.open()
        try:
            outcome = await session.run()
            assert outcome.ok, outcome.errors
            deadline = time.monotonic() + 60
            while len(_seen(out, "part")) < 3 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        finally:
            await session.close()

    try:
        run_async(visit())
    finally:
        stop_server(server)
    (whole,) = _seen(out, "whole")
    assert whole == {**whole, "runtime": True, "session": True, "busy": True, "address": "ClientState",
                     "this_page_listed": True, "running_page": True, "loop_running": True,
                     "alive": True, "alive_unknown": False, "outside_fragment": True, "sent": True,
                     "held": True, "held_unknown": False}
    assert whole["runs_in_progress"] >= 1 and whole["main_hash"] and whole["session_id"]
    (asked,) = _seen(out, "rerun_fragment")
    assert asked == {"kind": "rerun_fragment", "queued": True, "unknown": False}
    parts = _seen(out, "part")
    assert [p["runs"] for p in parts] == [1, 2, 3], "the fragment did not rerun by key and by push"
    assert {p["whole_runs"] for p in parts} == {1}, "a rerun meant for the fragment ran the whole page"
    for p in parts:
        assert p["session_id"] == whole["session_id"] and p["same_session"] and p["fragment_id"]
        assert p["page_hash_known"] and p["auto"] and p["has_fragment"]
    assert _seen(out, "push") == [{"kind": "push", "idle": True}]
