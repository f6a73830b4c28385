"""The stage's controls: the run's main knobs drawn inside the graph view, live while dragging.

Streamlit's own slider sends its value only on release (a 2.8 s drag drew no graph
until the mouse came up), so the Playground's T, hidden size, layers and cell are
drawn by the graph view component itself, in a strip above the graph. The
browser sends ``{knob: value, ..., "req": n}`` as the component's ``knobs`` state
while the pointer moves, one request at a time: the next goes out only once the
payload answering ``req`` has arrived (``stage.req``), so a fast drag is never a
queue of runs that interrupt each other, and the last value always goes out.

The values live in ``st.session_state`` under ``stage:<knob name>`` and in the
URL, which this module writes. A value put under the knob's own name (by the
link's check, ``ui.url_messages``, by class mode, by a test) is taken over on the
next run, as a widget with that key would take it. The namespace is not the bare
name because the Train page has widgets keyed ``seq_len``: Streamlit deletes a
widget's key at the end of a run that does not draw it. Values from the browser
are untrusted: each goes through its knob's ``parse`` like a value from a link.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import streamlit as st

from stockdemo.config import (
    CELL,
    COMPARE,
    HIDDEN_SIZE,
    NUM_LAYERS,
    RUN_KNOBS,
    SEQ_LEN,
    ChoiceKnob,
    IntKnob,
    RunConfig,
    compare_text,
    parse_compare,
    url_value,
)
from stockdemo.ui.assets import component_js

if TYPE_CHECKING:
    from stockdemo.ui.panels import Metric

REPLAY_HELP = ("Runs the model again with hooks: the order autograd created each node, the line of "
               "forward that made it, and a real backward() in the engine's order. Then play it "
               "here, in your browser: Record, Backward, step or scrub.")

STAGE_KNOBS: tuple[IntKnob | ChoiceKnob, ...] = (SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL)
_REQ = "_stage_req"  # the browser's request number the session last took
_WRITTEN = "stage:url"  # what this module last wrote to the URL, by knob name
_LOGGER = logging.getLogger(__name__)


def _key(knob: IntKnob | ChoiceKnob) -> str:
    return f"stage:{knob.name}"


def _checked(knob: IntKnob | ChoiceKnob, raw: object) -> object:
    value, _ = knob.parse([str(raw)[:64]])
    return value


def stage_values(knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> dict[str, object]:
    """The knobs' current values: the session's, else the default.

    A URL value this module did not write came from a link followed in the same session
    (a lesson step's "Open the Playground at T = 6"): it is taken, checked, as a bound
    widget would take it (``ui.url_messages`` checks a link only on a session's first visit),
    and a knob such a link leaves out is back at its default. A link with none of the
    knobs (the menu's) keeps the learner's stage: coming back to the Playground found T
    at 5 again after any other page.
    The URL itself is written by ``stage_to_url`` once the learner stops.
    """
    written = st.session_state.setdefault(_WRITTEN, {})
    values = {}
    linked = any(st.query_params.get(knob.name) is not None for knob in knobs)
    for knob in knobs:
        in_link = st.query_params.get(knob.name)
        if linked and knob.name in written and in_link != written[knob.name]:
            value, message = knob.parse([in_link] if in_link is not None else None)
            st.session_state[_key(knob)] = value
            written[knob.name] = in_link
            if message:
                st.warning(message, icon=":material/link_off:")
        if knob.name in st.session_state:
            st.session_state[_key(knob)] = _checked(knob, st.session_state.pop(knob.name))
        values[knob.name] = st.session_state.get(_key(knob), knob.default)
    return values


def stage_to_url(knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> None:
    """Write the knobs' values to the URL: in the panels' run, once the learner has stopped.

    Not on every value a drag crosses: a new address makes Streamlit's page in the
    browser push a history entry and redraw every element it holds, not only the
    stage's (a share of each step's ~60 ms between the server's answer and the graph).
    """
    written = st.session_state.setdefault(_WRITTEN, {})
    for knob in knobs:
        value = st.session_state.get(_key(knob), knob.default)
        in_url = None if value == knob.default else url_value(knob.name, value)
        if st.query_params.get(knob.name) != in_url:
            if in_url is None:
                st.query_params.pop(knob.name, None)
            else:
                st.query_params[knob.name] = in_url
        written[knob.name] = in_url


def take_stage_knobs(key: str, knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> None:
    """The component's ``knobs`` state changed: its values, checked, become the session's."""
    sent = getattr(st.session_state.get(key), "knobs", None)
    if not isinstance(sent, dict):
        return
    for knob in knobs:
        if knob.name in sent:
            st.session_state[_key(knob)] = _checked(knob, sent[knob.name])
    req = sent.get("req")
    if isinstance(req, int) and not isinstance(req, bool) and 0 <= req < 2**53:
        st.session_state[_REQ] = req


# The panels under a stage (the Playground's predictions, ops, code...) follow the run
# only once the learner stops moving: drawing them for every value a drag crosses would
# redraw a plotly chart each time (its redraw took ~70 ms of the browser's main thread
# per value in headless Chromium). The stage's browser code fires a DOM event
# ("stockdemo:settled") when the learner stops; this listener, drawn inside the panels'
# fragment, turns it into a trigger of its own, so only that fragment reruns: not the
# stage again, not the page frame (a whole-page run cost ~25 ms of server CPU a settle).
#
# It also watches the stage. The panels are drawn after the stage, in the same run; if
# WATCH_MS later no graph view is drawn as a stage (the graph view's own register,
# window.stockdemoStages) and its code is not still loading, the listener says
# "missing" and the page runs again whole. Seen in class mode on slow boxes: a
# following student's Playground opened with its panels and without its stage, its
# element sent on the websocket and never drawn (tests/browser/test_classroom_mode_browser.py
# failed so at least 5 times in stops 32-33; not reproduced in stop 34, with the box
# quiet or both cores kept busy).
WATCH_MS = 3000
_SETTLE_LISTENER = st.components.v2.component("stockdemo_settle", html="<span hidden></span>",
                                               js=component_js("settle", watch_ms=WATCH_MS))
# A stage found missing runs the page again at most this many times in REDRAW_WINDOW_S: a
# graph view that cannot draw at all (its code broken) must not rerun the page for ever.
REDRAWS = 3
REDRAW_WINDOW_S = 60.0
_REDRAWN = "stage:redrawn_at"  # when the watch ran the page again, each time (a few a session)


def settle_listener(key: str = "stage_settled") -> str | None:
    """Draw first inside the fragment that must follow the stage once the learner stops moving.

    -> the picture the browser's stage settled on (its payload's ``graph``), when that is
    what reran this fragment; else None. If the browser found the stage missing, the
    whole page runs again instead (REDRAWS at most in REDRAW_WINDOW_S).
    """
    got = _SETTLE_LISTENER(key=key, height=0,
                           on_settled_change=lambda: None, on_missing_change=lambda: None)
    if getattr(got, "missing", None):
        now, redrawn = time.monotonic(), st.session_state.get(_REDRAWN, [])
        if sum(now - at < REDRAW_WINDOW_S for at in redrawn) < REDRAWS:
            st.session_state[_REDRAWN] = [*redrawn, now]
            _LOGGER.warning("stage: the browser has no stage %.0f ms after its panels; "
                            "the page runs again whole", WATCH_MS)
            st.rerun(scope="app")
    settled = getattr(got, "settled", None)
    graph = settled.get("graph") if isinstance(settled, dict) else None
    return graph if isinstance(graph, str) and len(graph) <= 64 else None


def stage_spec(values: dict[str, object], *, change: str = "", locked: str | None = None,
               replay: bool | None = None, figures: Iterable[Metric] = (), present: bool = False,
               knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> dict[str, Any]:
    """The payload's ``stage`` object: the strip's controls, their values, the request answered.

    ``change``: what changed since the previous run, in words. ``locked``: why the
    controls cannot be moved (a student following the teacher), or None.
    ``replay``: the view draws its own "Replay this run" toggle, on or off (None: no toggle).
    ``figures``: the run's figures, drawn by the view over its controls (``ui.run_figures``):
    in the same message as the graph, never a step behind it, and no element of their own
    for the page to redraw on every value a drag crosses. ``present``: presenter mode.
    """
    controls = []
    for knob in knobs:
        control: dict[str, Any] = {"name": knob.name, "label": knob.label, "help": knob.help,
                                   "value": values[knob.name]}
        if isinstance(knob, ChoiceKnob):
            control["choices"] = [[c, knob.show(c)] for c in knob.choices]
        else:
            control.update(low=knob.low, high=knob.high, step=knob.step)
        controls.append(control)
    shown = [{"label": f.label, "value": str(f.value), "delta": f.delta, "help": f.help} for f in figures]
    return {"controls": controls, "req": int(st.session_state.get(_REQ, 0)), "change": change,
            "locked": locked, "replay": replay, "replay_help": REPLAY_HELP, "figures": shown,
            "present": present,
            # Another value after each watch's redraw (settle_listener): the element differs, so
            # a browser that holds it undrawn draws it again (an unchanged one it leaves as is).
            "redraw": len(st.session_state.get(_REDRAWN, ()))}


# -- compare mode: a run pinned as A beside the live run B ---------------------------
_PINNED = "stage:compare"  # run A's settings, as the link carries them (or absent)
_PINNED_WRITTEN = "stage:compare_url"  # what compare_config last wrote to the URL
_DRAWN = "stage:drawn"  # the config the stage drew last: what "Pin as A" pins


def compare_config() -> RunConfig | None:
    """Run A, pinned beside the live run (None: no comparison), the link's value checked.

    The URL's ``compare`` is written here, so a link reopens the same comparison; one
    this module did not write (a link followed later in the session) is taken, checked.
    """
    written = st.session_state.get(_PINNED_WRITTEN, "")  # "": nothing written yet
    in_link = st.query_params.get(COMPARE.name)
    if _PINNED not in st.session_state or in_link != written:
        config, messages = parse_compare([in_link] if in_link is not None else None)
        st.session_state[_PINNED] = None if config is None else compare_text(config)
        st.session_state["_stage_compare_messages"] = messages
    for message in st.session_state.get("_stage_compare_messages", ()):
        st.warning(message, icon=":material/link_off:")
    text = st.session_state[_PINNED]
    if in_link != text:
        if text is None:
            st.query_params.pop(COMPARE.name, None)
        else:
            st.query_params[COMPARE.name] = text
    st.session_state[_PINNED_WRITTEN] = text
    return None if text is None else parse_compare(text)[0]


def drawn_on_stage(config: RunConfig, view: str) -> None:
    """The settings the stage has just drawn: what "Pin as A" pins and the panels show."""
    st.session_state[_DRAWN] = (config, view)


def stage_config() -> tuple[RunConfig, str]:
    """(config, graph view) the stage drew last: what the panels under it show."""
    return st.session_state[_DRAWN]


def take_pin(key: str) -> None:
    """The view's "Pin as A" / "Stop comparing" was pressed: pin the run on screen, or unpin."""
    action = getattr(st.session_state.get(key), "pin", None)
    if action == "pin" and _DRAWN in st.session_state:
        st.session_state[_PINNED] = compare_text(st.session_state[_DRAWN][0])
    elif action == "unpin":
        st.session_state[_PINNED] = None
    st.session_state.pop("_stage_compare_messages", None)


def set_comparison(a_params: dict[str, str], b_params: dict[str, str]) -> None:
    """A comparison preset: run A's settings pinned, the stage moved to run B's (the rest default)."""
    a, _ = RunConfig.from_params(a_params)
    b, _ = RunConfig.from_params(b_params)
    st.session_state[_PINNED] = compare_text(a)
    st.session_state.pop("_stage_compare_messages", None)
    for knob in RUN_KNOBS:
        st.session_state[knob.name] = getattr(b, knob.name)


def run_label(config: RunConfig) -> str:
    """A run in a few words: 'T 5 · hidden 10 · 1 layer · nn.RNN' (+ what else differs)."""
    parts = [f"T {config.seq_len}", f"hidden {config.hidden_size}",
             f"{config.num_layers} layer{'s' if config.num_layers > 1 else ''}", CELL.show(config.cell)]
    for knob in RUN_KNOBS:
        if knob not in STAGE_KNOBS and getattr(config, knob.name) != knob.default:
            parts.append(f"{knob.label.lower()} {getattr(config, knob.name)}")
    return " · ".join(parts)


def stage_link(config: RunConfig, view: str) -> str:
    """The link to the Playground's run on screen: its settings, its graph view, run A if pinned."""
    from stockdemo.ui.controls import share_link  # controls imports this module

    params = dict(config.to_params())
    if view != "auto":
        params["view"] = view
    if st.session_state.get(_PINNED) is not None:
        params[COMPARE.name] = st.session_state[_PINNED]
    return share_link("pages/playground.py", params)
