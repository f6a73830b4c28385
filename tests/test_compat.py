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

import pytest
import streamlit
from streamlit import config, type_util
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import Runtime, app_session, fragment
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.runtime import AsyncObjects
from streamlit.runtime.scriptrunner import script_runner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    FragmentThreadState,
    ScriptRunContext,
    ThreadState,
)
from streamlit.runtime.state.query_params import QueryParams
from streamlit.runtime.state.session_state import SessionState
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT, free_port, run_async, start_server, stop_server
from stockdemo.ui import compat

PROBE = ROOT / "tests" / "apps" / "compat_probe.py"


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


def test_without_a_server_every_door_says_it_cannot(monkeypatch):
    """Raw mode (a notebook, ``python app.py``): no runtime, no script run."""
    monkeypatch.setattr(Runtime, "_instance", None)
    assert not compat.runtime_exists()
    assert compat.session_id() is None and compat.this_fragment_run() is None
    assert compat.app_session("anyone") is None and compat.alive()("anyone")
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
                     "alive": True, "alive_unknown": False, "outside_fragment": True, "sent": True}
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
