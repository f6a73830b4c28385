"""The "Your code" page's parts: the code a tab holds, the ready-made edits, the run's figures.

The code lives in the session (``keys.CODE_TEXT``) and, compressed, under the knob
``CODE``'s name and in the URL, so a link reopens it and class mode carries the teacher's
to followers as it carries any page's settings. Every run goes through the sandbox
(``stockdemo.sandbox``), once per distinct text for every session (``caches``).
"""

from __future__ import annotations

import time

import streamlit as st

from stockdemo.code.edits import EDITS, apply, seed_source
from stockdemo.code.link import code_from_link, code_to_link
from stockdemo.config import CODE, IntKnob
from stockdemo.graph import Graph
from stockdemo.i18n import N_, tr
from stockdemo.sandbox import CodeRun, Limits, code_enabled
from stockdemo.sandbox.limits import OFF_WORDS
from stockdemo.ui import code_route, compat, hooks, keys
from stockdemo.ui.caches import cached_code_picture, cached_code_run
from stockdemo.ui.code_editor import code_editor
from stockdemo.ui.code_view import (
    QUEUE_NOTE_S,
    code_stage,
    film_knob,
    new_ids,
    queue_words,
    run_figures,
    status,
)
from stockdemo.ui.graph_view import graph_view, replay_control
from stockdemo.ui.metrics import metric_row
from stockdemo.ui.routes import presenting
from stockdemo.ui.stage import checked_value, stage_values
from stockdemo.ui.url_sync import to_url
from stockdemo.ui.widgets import controls_locked

RESET = N_("the seed")  # the picker's first choice: back to the seed's code
GRAPH = "code_graph"  # the graph view's key


def code_source() -> str:
    """The code this tab shows, after taking a new one from the link or the teacher (once each)."""
    link = st.session_state.get(CODE.name)  # "" stands for the seed (the knob's default)
    if link is not None and link != st.session_state.get(keys.CODE_TAKEN):
        st.session_state[keys.CODE_TAKEN] = link
        source, message = code_from_link(link) if link else (seed_source(), None)
        if message:
            st.warning(message, icon=":material/link_off:")
        elif source is not None and source != st.session_state.get(keys.CODE_TEXT):
            _show(source, base=None, lesson="")
    if keys.CODE_TEXT not in st.session_state:
        _show(seed_source(), base=None, lesson="")
    return st.session_state[keys.CODE_TEXT]


def _show(source: str, base: str | None, lesson: str) -> None:
    """Put ``source`` in the editor (the browser replaces its text), as a diff against ``base``."""
    st.session_state[keys.CODE_TEXT] = source
    st.session_state[keys.CODE_BASE] = base
    st.session_state[keys.CODE_LESSON] = lesson
    st.session_state[keys.CODE_DOC] = st.session_state.get(keys.CODE_DOC, 0) + 1
    _to_link(source)


def _to_link(source: str) -> None:
    """The code into the link (the seed's is no link at all), and marked as this tab's own."""
    link = (code_to_link(source) or "") if source != seed_source() else CODE.default
    st.session_state[CODE.name] = st.session_state[keys.CODE_TAKEN] = link
    to_url(CODE, link)


def take_run(code: str, n: int) -> None:
    """The learner pressed Run: this text is the tab's code now (its link too)."""
    st.session_state[keys.CODE_RAN] = (n, code)
    if code != st.session_state.get(keys.CODE_TEXT):
        st.session_state[keys.CODE_LESSON] = ""  # the learner's own code now, not the edit's
        st.session_state[keys.CODE_BASE] = None  # a fresh editor (the page opened again) shows no diff
    st.session_state[keys.CODE_TEXT] = code
    _to_link(code)


def edits_picker() -> None:
    """One click to a ready-made edit (the seed with it, shown as a diff), or back to the seed;
    none while class mode says why not (a student answering the teacher's challenge)."""
    if hooks.ask(hooks.CODE_EDITS_OFF) is not None:
        return
    # By their English titles (what the callback reads, whatever language the page speaks).
    st.pills(tr("Try a ready-made edit"), [RESET, *(edit.title for edit in EDITS.values())],
             key=keys.CODE_EDIT, selection_mode="single", on_change=_pick_edit, format_func=tr,
             label_visibility="collapsed",
             help=tr("Each puts one change into the seed's code, shown as a diff in the editor, and "
                     "runs it."))


def _pick_edit() -> None:
    title = st.session_state.get(keys.CODE_EDIT)
    edit = next((e for e in EDITS.values() if e.title == title), None)
    if edit is not None:
        _show(apply(edit), base=seed_source(), lesson=edit.lesson)
    elif title == RESET:
        _show(seed_source(), base=None, lesson="")
    st.session_state[keys.CODE_EDIT] = None  # a pill is a button: the same edit again is a click


def lesson() -> str:
    """What the ready-made edit on screen teaches, in one line in the reader's language ("" for
    the learner's own code). The session keeps its msgid."""
    kept = st.session_state.get(keys.CODE_LESSON, "")
    return tr(kept) if kept else ""


def editor_state() -> tuple[str, int, str | None, int]:
    """(the text, its version, the diff's base, the number of the last Run answered) for the editor."""
    ran = st.session_state.get(keys.CODE_RAN, (0, ""))[0]
    return (st.session_state[keys.CODE_TEXT], st.session_state.get(keys.CODE_DOC, 0),
            st.session_state.get(keys.CODE_BASE), ran)


def runs_alone() -> bool:
    """Whether a Run reruns the editor and its graph alone (a fragment), not the whole page:
    outside a class. In one, the class bar hears a student's Run and sends the teacher's code
    in the whole page's run (``hooks.IN_CLASS``)."""
    return not hooks.ask(hooks.IN_CLASS)


def enabled() -> bool:
    """Whether the operator lets learners' code run here (``STOCKDEMO_CODE=off``: no)."""
    return code_enabled()


def off_message() -> str:
    return str(OFF_WORDS)


def session_runner(source: str) -> CodeRun:
    """A run for a check or a preview, through the sandbox's fair queue as this session's (and
    its cache: the same text is run once for everyone)."""
    return cached_code_run(source, who=compat.session_id())


def run_now(source: str) -> CodeRun:
    """Run ``source`` in the sandbox, once for every session that runs the same text. A run
    that waits for a place past ``QUEUE_NOTE_S`` says where it stands in the queue."""
    notes: list = []  # the note's place, made only for a wait: two messages fewer a press
    sent = time.monotonic()

    def waiting(ahead: int) -> None:
        if time.monotonic() - sent >= QUEUE_NOTE_S:
            if not notes:
                notes.append(st.empty())
            notes[0].info(queue_words(ahead), icon=":material/hourglass_top:")

    run = cached_code_run(source, who=compat.session_id(), on_wait=waiting)
    for note in notes:
        note.empty()
    return run


def forward_line(source: str) -> int | None:
    """The line of ``def forward``: the editor opens scrolled to it."""
    return next((i for i, text in enumerate(source.splitlines(), 1)
                 if text.strip().startswith("def forward")), None)


def editor(run: CodeRun, direct: str | None = None) -> None:
    """The code in the editor, with the run's error marked and what it printed under it. Over
    the code, what the edit teaches and what the run built (its film): beside the graph,
    not over it, where every line would be height the graph loses. ``direct``: the code's
    socket, where the editor sends a Run first (``code_route``), or None."""
    text, version, base, ran = editor_state()
    over = " ".join(words for words in (lesson(), run.film_words) if words)
    code_editor(text, str(version), take_run, base=base, ran=ran, error=error_mark(run), status=status(run),
                locked=controls_locked(), present=presenting(), focus_line=forward_line(text),
                printed=run.printed, lesson=over, draft=hooks.ask(hooks.CODE_DRAFT), direct=direct)


def result(source: str, run: CodeRun) -> str | None:
    """The graph of the run on a stage (its figures, the replay toggle and, for a training
    loop's film, the stepper through its graphs, all in the view), or, when it made no graph,
    its figures and the error in Python's words. -> the code's socket for the editor's next
    Run (``code_route``), or None: it goes through this page's run."""
    if not run.film:
        metric_row(run_figures(run))
        st.error(run.message, icon=":material/error:")
        code_route.unseat()
        return None
    frame = film_frame(source, film_knob(run))
    shown_picture, trace = picture(source, frame)
    shown = replay_control(lambda: trace, in_url=False, in_view=True) if trace is not None else None
    ringed = new_since_previous(shown_picture.graph)
    compare = hooks.ask(hooks.CODE_COMPARISON, source, shown_picture)
    served = shown is None and compare is None and code_route.offered()
    stage, knobs = code_stage(run, frame, shown_picture, replay=None if trace is None else shown is not None,
                              present=presenting(), ran=editor_state()[3], served=served)
    graph_view(shown_picture, shown, new_ids=ringed, key=GRAPH, url_key=None, on_unroll=take_unroll,
               compare=compare, stage=stage, knobs=knobs)
    if not served:
        code_route.unseat()
        return None
    return code_route.seat(GRAPH, presenting())


def film_frame(source: str, knob: IntKnob) -> int:
    """Which of the run's graphs to draw (an index into ``run.film``): the learner's pick on
    the stage's stepper while the code is the same, else the last."""
    if st.session_state.get(keys.CODE_FILM_OF) != source:
        st.session_state[keys.CODE_FILM_OF] = source
        st.session_state.pop(keys.STAGE_VALUE.format(knob.name), None)
    frame = st.session_state[keys.CODE_FRAME] = int(checked_value(knob, stage_values((knob,))[knob.name]))
    return frame


def new_since_previous(graph: Graph) -> tuple[str, ...]:
    """The ids this run's graph has that this tab's previous run had not (ringed on the graph);
    the tab keeps this graph's (``code_view.new_ids``)."""
    ringed, st.session_state[keys.CODE_PREVIOUS] = new_ids(graph, st.session_state.get(keys.CODE_PREVIOUS))
    return ringed


def picture(source: str, frame: int = -1):
    """(Picture, Trace) of a run that made a graph (its film's ``frame``, -1 the last): laid
    out by its code, with the rolled boxes the learner clicked drawn unrolled. A graph a
    backward() freed has no replay (None)."""
    kept = st.session_state.get(keys.CODE_UNROLL)
    unroll = kept[1] if kept is not None and kept[0] == source else frozenset()
    drawn, trace = cached_code_picture(source, unroll, frame)
    st.session_state[keys.CODE_UNROLL] = (source, unroll, frozenset(drawn.folds) | unroll)
    return drawn, trace


def take_unroll() -> None:
    """A click on a rolled box: the view's ``unroll``, checked against the folds drawn."""
    asked = getattr(st.session_state.get(GRAPH), "unroll", None)
    kept = st.session_state.get(keys.CODE_UNROLL)
    if kept is None or not isinstance(asked, list):
        return
    source, _, allowed = kept
    st.session_state[keys.CODE_UNROLL] = (source, frozenset(i for i in asked if i in allowed), allowed)


def error_mark(run: CodeRun) -> dict[str, object] | None:
    """The editor's mark for the run's error: its line in the learner's code and the message."""
    if run.error is None:
        return None
    return {"line": run.error.line, "message": run.message}


def limits_words() -> str:
    return Limits().words()
