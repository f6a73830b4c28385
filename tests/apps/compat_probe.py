"""A page that calls every function of ``stockdemo.ui.compat`` on a real server (tests/test_compat.py).

Each run appends one JSON line of what it saw to the file named by $STOCKDEMO_COMPAT_OUT.
Its fragment reruns itself twice: once by ``compat.rerun_fragment`` (as a class bar's timer
run asks for the stage), once from another thread through the server's event loop (as the
class push asks for a student's part).
"""

import json
import os
import threading
from pathlib import Path

import streamlit as st

from harness.helpers import wait_until
from stockdemo.ui import compat

OUT = Path(os.environ["STOCKDEMO_COMPAT_OUT"])
HERE = os.path.realpath(__file__)


def say(**seen) -> None:
    with OUT.open("a") as f:
        f.write(json.dumps(seen) + "\n")


def push_when_idle(session, request) -> None:
    """As the class push does: wait until the tab's run is over, then rerun its fragment."""
    try:
        wait_until(lambda: not compat.busy(session), 20, "the tab's run over", interval=0.03)
    except AssertionError:
        pass  # said below: the push went out on a busy tab
    say(kind="push", idle=not compat.busy(session))
    compat.event_loop().call_soon_threadsafe(compat.rerun_session, session, request)


@st.fragment(key="probe_part")
def part() -> None:
    runs = st.session_state["part_runs"] = st.session_state.get("part_runs", 0) + 1
    st.markdown(f"part run {runs}")
    here = compat.this_fragment_run()
    session_id, request = here if here is not None else (None, None)
    session = compat.app_session(session_id) if session_id else None
    say(kind="part", runs=runs, whole_runs=st.session_state["whole_runs"],
        session_id=session_id, same_session=session_id == compat.session_id(),
        fragment_id=request.fragment_id if request else None,
        page_hash_known=bool(request and request.page_script_hash),
        auto=bool(request and request.is_auto_rerun),
        has_fragment=bool(session and request and compat.has_fragment(session, request.fragment_id)))
    if runs == 1:
        say(kind="rerun_fragment", queued=compat.rerun_fragment("probe_part"),
            unknown=compat.rerun_fragment("no-such-fragment"))
    elif runs == 2 and session is not None:
        threading.Thread(target=push_when_idle, args=(session, request), daemon=True).start()


st.session_state["whole_runs"] = st.session_state.get("whole_runs", 0) + 1
st.title("compat probe")
session_id = compat.session_id()
session = compat.app_session(session_id) if session_id else None
address = compat.tab_address(session) if session is not None else None
scripts = compat.page_scripts(session) if session is not None else None
alive = compat.alive()
say(kind="whole", runs=st.session_state["whole_runs"], runtime=compat.runtime_exists(),
    runs_in_progress=compat.runs_in_progress(), session_id=session_id, session=session is not None,
    busy=session is not None and compat.busy(session),
    address=type(address).__name__, main_hash=compat.main_script_hash(session) if session else None,
    this_page_listed=HERE in (scripts or {}).values(), running_page=compat.running_page_script() == HERE,
    loop_running=compat.event_loop().is_running(), alive=alive(session_id or ""),
    alive_unknown=alive("no-such-session"), outside_fragment=compat.this_fragment_run() is None,
    held=compat.holds_session(session_id or ""), held_unknown=compat.holds_session("no-such-session"),
    sent=compat.wait_until_sent(10.0))
part()
