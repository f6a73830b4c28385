"""The stage's controls: the run's main knobs drawn inside the graph view, live while dragging.

Streamlit's own slider sends its value only on release, so the Playground's T, hidden
size, layers and cell are drawn by the graph view component itself, in a strip above
the graph. The browser sends ``{knob: value, ..., "req": n}`` as the component's
``knobs`` state while the pointer moves, one request at a time: the next goes out only
once the payload answering ``req`` has arrived (``stage.req``), so a fast drag is never
a queue of runs that interrupt each other, and the last value always goes out.

The values live in ``st.session_state`` under ``keys.STAGE_VALUE`` and in the URL,
which this module writes. A value put under the knob's own name (by the link's check,
``ui.url_messages``, by a plug-in, by a test) is taken over on the next run, as a widget
with that key would take it. The namespace is not the bare name because the Train page
has widgets keyed ``seq_len``: Streamlit deletes a widget's key at the end of a run that
does not draw it. Values from the browser are untrusted: each goes through its knob's
``parse`` like a value from a link.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import streamlit as st

from stockdemo.config import CELL, HIDDEN_SIZE, NUM_LAYERS, SEQ_LEN, ChoiceKnob, IntKnob, RunConfig
from stockdemo.i18n import N_, tr
from stockdemo.layout.picture import Picture
from stockdemo.ui import keys
from stockdemo.ui.caches import cached_picture, cached_run, change_since
from stockdemo.ui.metrics import Metric, run_figures
from stockdemo.ui.url_sync import to_url

REPLAY_HELP = N_("Runs the model again with hooks: the order autograd created each node, the line of "
               "forward that made it, and a real backward() in the engine's order. Then play it "
               "here, in your browser: Record, Backward, step or scrub.")

STAGE_KNOBS: tuple[IntKnob | ChoiceKnob, ...] = (SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL)


def _key(knob: IntKnob | ChoiceKnob) -> str:
    return keys.STAGE_VALUE.format(knob.name)


def checked_value(knob: IntKnob | ChoiceKnob, raw: object) -> object:
    """A value the browser sent for ``knob``, through the knob's parser (clamped; never raises)."""
    value, _ = knob.parse([str(raw)[:64]])
    return value


def stage_values(knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> dict[str, object]:
    """The knobs' current values: the session's, else the default.

    A URL value this module did not write came from a link followed in the same session
    (a lesson step's "Open the Playground at T = 6"): it is taken, checked, as a bound
    widget would take it (``ui.url_messages`` checks a link only on a session's first visit),
    and a knob such a link leaves out is back at its default. A link with none of the
    knobs (the menu's) keeps the learner's stage, as they left it on another page.
    The URL itself is written by ``stage_to_url`` once the learner stops.
    """
    written = st.session_state.setdefault(keys.STAGE_WRITTEN, {})
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
            st.session_state[_key(knob)] = checked_value(knob, st.session_state.pop(knob.name))
        values[knob.name] = st.session_state.get(_key(knob), knob.default)
    return values


def stage_to_url(knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> None:
    """Write the knobs' values to the URL: in the panels' run, once the learner has stopped.

    Not on every value a drag crosses: a new address makes Streamlit's page in the
    browser push a history entry and redraw every element it holds, not only the stage's.
    """
    written = st.session_state.setdefault(keys.STAGE_WRITTEN, {})
    for knob in knobs:
        written[knob.name] = to_url(knob, st.session_state.get(_key(knob), knob.default))


def take_stage_knobs(key: str, knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> None:
    """The component's ``knobs`` state changed: its values, checked, become the session's."""
    sent = getattr(st.session_state.get(key), "knobs", None)
    if not isinstance(sent, dict):
        return
    for knob in knobs:
        if knob.name in sent:
            st.session_state[_key(knob)] = checked_value(knob, sent[knob.name])
    req = sent.get("req")
    if isinstance(req, int) and not isinstance(req, bool) and 0 <= req < 2**53:
        st.session_state[keys.STAGE_REQ] = req


def stage_spec(values: dict[str, object], *, change: object = "", locked: str | None = None,
               replay: bool | None = None, figures: Iterable[Metric] = (), present: bool = False,
               knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS, pin: bool = True,
               grows: str = "right", direct: str | None = None, req: int | None = None,
               redraw: int | None = None, words: dict[str, list[str]] | None = None, ran: int | None = None,
               served: bool = False) -> dict[str, Any]:
    """The payload's ``stage`` object: the strip's controls, their values, the request answered.

    ``change``: what changed since the previous run, in words (a Message: said here). ``locked``: why the
    controls cannot be moved (``ui.controls_locked``), or None.
    ``replay``: the view draws its own "Replay this run" toggle, on or off (None: no toggle).
    ``figures``: the run's figures, drawn by the view over its controls (``ui.run_figures``):
    in the same message as the graph, never a step behind it, and no element of their own
    for the page to redraw on every value a drag crosses. ``present``: presenter mode.
    ``pin``: the view offers "Pin as A" (compare mode). ``grows``: where the next run's graph
    may grow, "right" (time steps) or "both" (a learner's code may add layers too).
    ``direct``: the socket the browser sends its moves to instead of a run (``stage_route``), or None.
    ``req``, ``redraw``: the request answered and the watch's redraws; None: this session's.
    ``words``: a number knob's values as the strip says them, from its low to its high
    (a film's "graph 3 of 5"), instead of the number.
    ``ran``: the learner's Run of their code this stage answers (Your code), or None;
    ``served``: the view also takes the runs the code's socket answers (``code_route``).
    """
    controls = []
    for knob in knobs:
        control: dict[str, Any] = {"name": knob.name, "label": tr(knob.label), "help": tr(knob.help),
                                   "value": values[knob.name]}
        if isinstance(knob, ChoiceKnob):
            control["choices"] = [[c, knob.show(c)] for c in knob.choices]
        else:
            control.update(low=knob.low, high=knob.high, step=knob.step)
            if words and knob.name in words:
                control["words"] = words[knob.name]
        controls.append(control)
    shown = [{"label": f.label, "value": str(f.value), "delta": f.delta, "help": f.help} for f in figures]
    if req is None:
        req = int(st.session_state.get(keys.STAGE_REQ, 0))
    if redraw is None:
        redraw = len(st.session_state.get(keys.STAGE_REDRAWN, ()))
    return {"controls": controls, "req": req, "change": str(change), "locked": locked, "replay": replay,
            "replay_help": tr(REPLAY_HELP), "figures": shown, "present": present, "pin": pin, "grows": grows,
            "direct": direct, "ran": ran, "served": served,
            # Another value after each watch's redraw (stage_watch): the element differs, so
            # a browser that holds it undrawn draws it again (an unchanged one it leaves as is).
            "redraw": redraw}


def stage_of_run(config: RunConfig, view: str, values: dict[str, object], previous: dict | None,
                 started: float, **spec: Any) -> tuple[Picture, dict, dict[str, Any]]:
    """What the stage draws for the run of ``config``, assembled here for the page's run
    (``live_stage``) and for the socket's answer (``stage_route``) alike.

    -> its picture for ``view``; what changed since ``previous`` (``caches.change_since``'s
    record, the next ``previous``); the stage (``stage_spec`` of ``values``, with the run's
    figures, timed from ``started``, a ``time.perf_counter()``). ``spec``: ``stage_spec``'s
    other arguments.
    """
    result, picture = cached_run(config), cached_picture(config, view)
    change = change_since(previous, config, result.graph)
    figures = run_figures(result, change["delta"], (time.perf_counter() - started) * 1e3)
    return picture, change, stage_spec(values, change=change["change"], figures=figures, **spec)


def live_stage(config: RunConfig, view: str, started: float, **spec: Any
               ) -> tuple[Picture, tuple[str, ...], dict[str, Any]]:
    """``stage_of_run`` in the Playground's run: the stage's values and the previous run with other
    settings are this session's (a rerun with the same settings is no new run: it keeps reporting
    the last change). -> the picture, the ids of the nodes new since the previous run, the stage."""
    previous = st.session_state.get(keys.PREVIOUS_RUN)
    picture, change, stage = stage_of_run(config, view, stage_values(), previous, started, **spec)
    st.session_state[keys.PREVIOUS_RUN] = change
    return picture, change["new"], stage
