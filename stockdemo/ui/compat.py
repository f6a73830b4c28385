"""The one door to Streamlit's private internals: everything here leans on Streamlit 1.67.0.

The app needs a few things Streamlit offers no public API for: starting a run of
another session from the server (class mode's push), rerunning one fragment by its
key from a timer's run, knowing which page a run runs as, waiting until a run's
messages have gone out, counting the runs in progress, building the theme part
of every run's ``new_session`` message once instead of per run, knowing whether a
session a reconnect names is held here, keeping a resumed session from watching
files the server was told not to watch, keeping a finished run's last messages from a
rerun that comes before they are sent, sending a session's messages to the websocket it
has now, and correcting a link's value before the
widgets bound to it read it. Each is one function here; nothing else in stockdemo
touches Streamlit's private names.
``tests/test_compat.py`` pins the version and checks that each thing used here
still exists and behaves, so an upgrade fails there, by name, not in a class.

Every function degrades to "cannot" (None, False, 0) where there is no runtime
(AppTest, a script run outside a server).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from streamlit import config
from streamlit.errors import StreamlitAPIException
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime import app_session as _app_session
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

STREAMLIT_VERSION = "1.67.0"  # what every function here was written and tested against
# Streamlit runs each session's script run in a thread of this name (ScriptRunner.start).
SCRIPT_THREAD = "ScriptRunner.scriptThread"

__all__ = ["SCRIPT_THREAD", "STREAMLIT_VERSION", "ClientState", "alive", "app_session", "busy",
           "cache_theme_messages", "defer_reruns_behind_finished_runs", "event_loop", "has_fragment",
           "holds_session", "link_carries", "main_script_hash", "page_scripts", "rerun_fragment",
           "rerun_session", "resume_without_watchers", "running_page_script", "runs_in_progress",
           "runtime_exists", "send_to_the_current_websocket", "session_id", "tab_address",
           "this_fragment_run", "wait_until_sent"]


def runs_in_progress() -> int:
    """How many script runs this server process is in the middle of, this one included."""
    return sum(1 for t in threading.enumerate() if t.name == SCRIPT_THREAD)


def runtime_exists() -> bool:
    """A server runs this process (not AppTest, not a bare script)."""
    return Runtime.exists()


def session_id() -> str | None:
    """The id of the session this script run belongs to; None without a server."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None and Runtime.exists() else None


def link_carries(name: str, text: str) -> bool:
    """From now on this run's link carries ``text`` under ``name``, as if the browser had sent it:
    in the address, and for the widgets bound to ``name`` later in the run, which read the link
    the browser sent (and drop a value they cannot read, even one the page took). Call it before
    those widgets are drawn. False where there is no script run."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return False
    with ctx.session_state.query_params() as qp:
        qp[name] = text
        qp._initial_query_params[name] = [text]
    return True


def this_fragment_run() -> tuple[str, ClientState] | None:
    """From inside a fragment's run: (session id, the request that reruns this fragment).

    None outside a fragment, or without a server.
    """
    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return None
    fragment_id = ThreadState.get().fragment_id  # the running fragment, as 1.67 keeps it
    if not fragment_id:
        return None
    return ctx.session_id, ClientState(query_string=ctx.query_string, page_script_hash=ctx.page_script_hash,
                                       fragment_id=fragment_id, is_auto_rerun=True)


def fragment_of_its_own(func: Callable[..., Any], name: str, *args: Any) -> Callable[[], Any]:
    """``func(*args)`` as a function whose fragment id is its own, told apart by ``name``.

    Streamlit 1.67 names a fragment by its function's module and ``__qualname__`` and the
    place it is drawn: one function drawn at the same place on every page has one id on
    every page. A run asked for with the id of the page before would then run this page's
    fragment as that page.
    """
    def call() -> Any:
        return func(*args)

    call.__qualname__ = f"{getattr(func, '__qualname__', 'fragment')}[{name}]"
    return call


def running_page_script() -> str | None:
    """The script path of the page this run runs as, as Streamlit sees it (None: unknown)."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    info = ctx.pages_manager.get_pages().get(ctx.page_script_hash)
    return info.get("script_path") if info else None


def rerun_fragment(key: str) -> bool:
    """Queue a rerun of the fragment keyed ``key`` as ``st.rerun`` queues one: it starts once
    this run ends. -> False where that cannot be done (the caller reruns the page instead).

    Streamlit 1.67 offers a keyed rerun only from a widget's callback; a timer's run needs this.
    """
    ctx = get_script_run_ctx()
    if ctx is None or ctx.script_requests is None:
        return False
    try:
        fragments = ctx.fragment_storage.resolve_target(key)
    except StreamlitAPIException:
        return False
    ctx.script_requests.request_rerun(RerunData(
        query_string=ctx.query_string, page_script_hash=ctx.page_script_hash,
        fragment_id_queue=fragments, is_fragment_scoped_rerun=True,
        cached_message_hashes=ctx.cached_message_hashes, context_info=ctx.context_info))
    return True


def app_session(session_id: str) -> Any | None:
    """A connected session of this server by id (documented thread-safe); None if gone."""
    if not Runtime.exists():
        return None
    return Runtime.instance().get_app_session(session_id)


def holds_session(session_id: str) -> bool:
    """This server holds the session: connected, or disconnected and kept for its browser to
    come back to (a websocket naming it resumes it instead of starting a new one)."""
    if not Runtime.exists():
        return False
    return Runtime.instance()._session_mgr.get_session_info(session_id) is not None


def alive() -> Callable[[str], bool]:
    """-> whether a session id is still connected to this server (all are, without a server)."""
    if not Runtime.exists():
        return lambda session_id: True
    runtime = Runtime.instance()
    return lambda session_id: runtime.get_app_session(session_id) is not None


def event_loop() -> asyncio.AbstractEventLoop:
    """The server's event loop, where a session's rerun must be asked for."""
    return Runtime.instance()._get_async_objs().eventloop


def busy(session) -> bool:
    """The session's last run is not over, or its messages are still on their way."""
    return getattr(session, "_scriptrunner", None) is not None


def rerun_session(session, request: ClientState) -> None:
    """Start a run of ``session`` as its browser would with ``request`` (on the event loop)."""
    session.request_rerun(request)


def has_fragment(session, fragment_id: str) -> bool:
    """The session's page holds this fragment now."""
    return session.has_fragment(fragment_id)


def tab_address(session) -> ClientState | None:
    """What the session's browser last ran: its page hash and query string (None: unknown)."""
    now = getattr(session, "_client_state", None)
    return now if isinstance(now, ClientState) else None


def main_script_hash(session) -> str | None:
    """The hash a tab's first run starts under, before it learns its page."""
    return getattr(getattr(session, "_pages_manager", None), "main_script_hash", None)


def page_scripts(session) -> dict[str, str] | None:
    """The app's pages as this session knows them: {page script hash: script path}; None: unknown."""
    manager = getattr(session, "_pages_manager", None)
    if manager is None:
        return None
    return {h: info.get("script_path") for h, info in manager.get_pages().items()}


def wait_until_sent(timeout: float) -> bool:
    """Wait until what this script run queued has gone out to the browser (at most ``timeout``).

    A marker goes through the server's event loop after every message queued before it;
    then the session's queue must be empty. -> False at once where there is no server.
    """
    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return False
    runtime = Runtime.instance()
    session = runtime.get_app_session(ctx.session_id)
    if session is None:
        return False
    deadline = time.monotonic() + timeout
    reached = threading.Event()
    try:
        runtime._get_async_objs().eventloop.call_soon_threadsafe(reached.set)
        queue = session._browser_queue
    except (AttributeError, RuntimeError):
        return False
    if not reached.wait(timeout):
        return False
    while not queue.is_empty() and time.monotonic() < deadline:
        time.sleep(0.01)
    return queue.is_empty()


def cache_theme_messages() -> bool:
    """Build the theme of Streamlit's ``new_session`` message once per theme, not on every run.

    Every script run, a fragment's too, starts with a ``new_session`` message whose six
    theme sections Streamlit 1.67 reads from its config by scanning every option for
    each section (``_populate_theme_msg``). Here each section's message is built once
    per set of values and copied: the values are still read on each run, so a changed
    option (``set_option``, a config file parsed again) gives a new message.
    -> False if Streamlit no longer has the function (nothing is changed then).
    """
    original = getattr(_app_session, "_populate_theme_msg", None)
    if original is None or getattr(original, "_stockdemo_cached", False):
        return original is not None
    options_of: dict[str, tuple[dict, list]] = {}  # section -> (the config's options, the section's)
    built: dict[tuple, Any] = {}

    def populate(msg, section: str = "theme") -> None:
        options = config.get_config_options()
        mine = options_of.get(section)
        if mine is None or mine[0] is not options:
            mine = options_of[section] = (options, [o for o in options.values() if o.section == section])
        key = (section, repr([o.value for o in mine[1]]))
        done = built.get(key)
        if done is None:
            done = type(msg)()
            original(done, section)
            built[key] = done
        if done.ByteSize():  # an empty section stays unset, as Streamlit leaves it
            msg.MergeFrom(done)

    populate._stockdemo_cached = True
    populate.__wrapped__ = original
    _app_session._populate_theme_msg = populate
    return True


def resume_without_watchers() -> bool:
    """A resumed session watches no file where ``server.fileWatcherType`` is "none", as a new one.

    Streamlit 1.67 gives a new session its file watchers only if that option is not "none",
    but gives them again to every session it resumes (``WebsocketSessionManager.
    _resume_stored_session`` calls ``register_file_watchers`` whatever the option). From
    then on each of that session's runs ends with a walk of every module imported for
    paths to watch, on the server's event loop: about 220 ms of CPU the first time with
    torch's 3,000 modules, and again after any new import. A lecture that reconnects at
    once paid it 300 times. -> False if Streamlit no longer has the method.
    """
    original = getattr(AppSession, "register_file_watchers", None)
    if original is None or getattr(original, "_stockdemo_gated", False):
        return original is not None

    def register_file_watchers(self) -> None:
        if config.get_option("server.fileWatcherType") != "none":
            original(self)

    register_file_watchers._stockdemo_gated = True
    register_file_watchers.__wrapped__ = original
    AppSession.register_file_watchers = register_file_watchers
    return True


# Where a session keeps the reruns that wait for its finished run's last messages.
_WAITING = "_stockdemo_waiting_reruns"


def defer_reruns_behind_finished_runs() -> bool:
    """A rerun that reaches a session whose run is over, but whose messages are still on their
    way to the event loop, starts once they are there, instead of dropping them.

    Streamlit 1.67 hands a rerun to the session's script runner; one whose run is over
    refuses it, and ``AppSession.request_rerun`` then starts a new runner at once and ignores
    every event of the old one not yet handled on the event loop ("non-current
    ScriptRunner"): the run's last messages, on a busy server often the whole page. A
    fragment's timer or a push meeting that moment left a student on the page before. Here
    the new runner starts when the old one's SHUTDOWN, its last event, is handled. A
    whole-page rerun (``runner.fastReruns``) still replaces the runner at once: it draws
    everything again, and takes the place of the reruns that waited, as in Streamlit.
    -> False if Streamlit no longer has the two methods.
    """
    create = getattr(AppSession, "_create_scriptrunner", None)
    handle = getattr(AppSession, "_handle_scriptrunner_event_on_event_loop", None)
    if create is None or handle is None:
        return False
    if getattr(create, "_stockdemo_deferred", False):
        return True

    def _create_scriptrunner(self, initial_rerun_data) -> None:
        if self._scriptrunner is not None:  # it refused the rerun: its run is over
            self.__dict__.setdefault(_WAITING, []).append(initial_rerun_data)
            return
        self.__dict__.pop(_WAITING, None)  # a whole-page rerun: it supersedes them
        create(self, initial_rerun_data)

    def _handle_scriptrunner_event_on_event_loop(self, sender, event, *args, **kwargs) -> None:
        handle(self, sender, event, *args, **kwargs)
        if event != ScriptRunnerEvent.SHUTDOWN or self._scriptrunner is not None:
            return
        waiting = self.__dict__.pop(_WAITING, None)
        if waiting and self._state != AppSessionState.SHUTDOWN_REQUESTED:
            create(self, waiting[0])
            for later in waiting[1:]:
                self._scriptrunner.request_rerun(later)

    for patched, original in ((_create_scriptrunner, create),
                              (_handle_scriptrunner_event_on_event_loop, handle)):
        patched._stockdemo_deferred = True
        patched.__wrapped__ = original
        setattr(AppSession, original.__name__, patched)
    return True


def send_to_the_current_websocket() -> bool:
    """A session's messages go to the websocket it has when they are sent, not to the one it
    had when the server's flush began.

    Streamlit 1.67's flush (``Runtime._loop_coroutine``) takes the list of connected sessions,
    each with its websocket, then sends every session's queued messages, yielding to the event
    loop after each one: with 300 sessions' runs queued, a cycle lasts seconds. A session that
    reconnected meanwhile had its messages (a whole run after its reconnect) written to the
    closed websocket and lost, and its page stayed as it was. -> False if Streamlit no longer
    has ``Runtime._send_message``.
    """
    original = getattr(Runtime, "_send_message", None)
    if original is None or getattr(original, "_stockdemo_current", False):
        return original is not None

    def _send_message(self, session_info, msg) -> None:
        now = self._session_mgr.get_active_session_info(session_info.session.id)
        original(self, session_info if now is None else now, msg)

    _send_message._stockdemo_current = True
    _send_message.__wrapped__ = original
    Runtime._send_message = _send_message
    return True
