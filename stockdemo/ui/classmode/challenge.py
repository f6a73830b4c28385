"""A challenge on a student's Your code page: the prompt over an unlocked editor, each Run
sent to the class with its check's verdict, and the run the teacher shows beside their own.

While the teacher's challenge is open, a following student's editor is theirs: it opens
once on the challenge's starting code (``take``), and the teacher's code no longer
replaces it. Each Run the student presses is checked here, on the server, through the
sandbox (the check may run the code again: two seeds, longer sequences) and sent
(``Classroom.submit``). Nothing of another student's reaches this page but the run the
teacher shows, without its seat (``comparison``: compare mode, it as A, the student's as B).
Every string that came from someone else is drawn as text, never as markup.
"""

from __future__ import annotations

import difflib
import textwrap

import streamlit as st

from stockdemo.classroom import Asked, ClassError, ClassState, Failure, Submission
from stockdemo.classroom.challenges import (
    CHALLENGES,
    PROMPT,
    Challenge,
    Verdict,
    difference,
    prompt_challenge,
    shape_key,
)
from stockdemo.code.edits import seed_source
from stockdemo.code.link import code_to_link
from stockdemo.config import CODE
from stockdemo.graph.diff import graph_diff
from stockdemo.graph.ids import graph_of_record
from stockdemo.i18n import N_, tr
from stockdemo.render.payload import Comparison, Picture
from stockdemo.sandbox import CodeRun
from stockdemo.ui import keys
from stockdemo.ui.caches import cached_code_picture, cached_code_run
from stockdemo.ui.classmode.keys import (
    CHALLENGE_TAKEN,
    LOOKED,
    SHOWN_TAKEN,
    STATE,
    SUBMITTED,
    TEACHER,
    VERDICT,
)
from stockdemo.ui.classmode.keys import CODE as CLASS_CODE
from stockdemo.ui.classmode.session import class_lesson, class_room, say, seat
from stockdemo.ui.code_run import session_runner

CODE_PAGE = "pages/code.py"
SHOWN_LABEL = N_("Shown to the class")


FROM_LESSON = "lesson:"  # an asked challenge's id, before the id of the class lesson's challenge


def check_of(challenge_id: str, prompt: str) -> Challenge:
    """The challenge (and its check) behind an asked one: the class lesson's (its id after
    FROM_LESSON), a ready-made edit's, or the prompt's."""
    if challenge_id.startswith(FROM_LESSON):
        lesson = class_lesson()
        found = None if lesson is None else lesson.challenges().get(challenge_id.removeprefix(FROM_LESSON))
        if found is not None:
            return found
    return CHALLENGES.get(challenge_id) or prompt_challenge(prompt)


def open_here(state: ClassState | None, page: str | None) -> bool:
    """A challenge is open and this tab is on the Your code page."""
    return state is not None and state.challenge is not None and page == CODE_PAGE


def take(state: ClassState, full_run: bool) -> bool:
    """A following student on the Your code page while a challenge is open: the editor opens
    once on the challenge's starting code, then stays the student's -> whether the page must
    rerun (a new challenge, or a new run shown to the class).

    A session that meets the challenge already answered by its seat (a reload, a laptop
    that slept, a reconnect to another replica) goes on from the seat's last run, as the
    class store holds it: that code in the editor, its verdict above it.
    """
    fresh = st.session_state.get(CHALLENGE_TAKEN) != (state.code, state.challenge)
    if fresh:
        try:
            asked = class_room().open_challenge(state.code)
            mine = class_room().my_run(state.code, seat())
        except ClassError as error:
            say(error)
            return False
        if asked is not None:
            start = mine.code if mine is not None else asked.start
            st.session_state[CODE.name] = "" if start == seed_source() else (code_to_link(start) or "")
        if mine is not None:
            st.session_state[VERDICT] = (state.code, state.challenge, verdict_of(mine))
        st.session_state[CHALLENGE_TAKEN] = (state.code, state.challenge)
    shown = st.session_state.get(SHOWN_TAKEN) != state.shown
    st.session_state[SHOWN_TAKEN] = state.shown
    return (fresh or shown) and not full_run


def verdict_of(run: Submission) -> Verdict:
    """The verdict a seat's run got when it was sent, as the class store keeps it."""
    return Verdict(run.passes, run.sentence, run.reason)


def failure_of(run: CodeRun) -> Failure | None:
    """A failed run's error as the gallery groups it: what raised or stopped it, as named."""
    error = run.error
    return None if error is None else Failure(error.kind, error.type, error.message, error.limit, error.line)


def challenge_prompt(asked: Asked) -> str:
    """An asked challenge's prompt in the reader's language: a ready-made or lesson challenge's
    is in the catalogs; the teacher's own words stay as typed."""
    return asked.prompt if asked.id == PROMPT else tr(asked.prompt)


def send_run(state: ClassState, code: str) -> None:
    """The student's latest Run, checked, to the class: once per Run pressed."""
    ran = st.session_state.get(keys.CODE_RAN) or (0, "")
    sent = (code, state.challenge, ran[0], ran[1])
    last = st.session_state.get(SUBMITTED)
    if last is None or last[:2] != sent[:2]:
        st.session_state[SUBMITTED] = sent  # runs made before the challenge are not its
        return
    if last == sent or not ran[0] or not isinstance(ran[1], str):
        return
    try:
        asked = class_room().open_challenge(code)
    except ClassError as error:
        say(error)
        return
    if asked is None:
        return
    run = session_runner(ran[1])
    verdict = check_of(asked.id, asked.prompt).check.verdict(ran[1], session_runner, first=run)
    try:
        class_room().submit(code, seat(), ran[1], verdict.passes, verdict.sentence,
                            shape_key(run.graph if run.film else None), failure_of(run),
                            verdict.reason)
    except ClassError as error:
        say(error)
        return
    st.session_state[SUBMITTED] = sent
    st.session_state[VERDICT] = (code, state.challenge, verdict)


def student_box(state: ClassState, code: str) -> None:
    """Over a student's editor while a challenge is open: the prompt, their last verdict,
    and the run the teacher shows (its code; its graph is beside theirs)."""
    send_run(state, code)
    try:
        asked = class_room().open_challenge(code)
        shown = class_room().shown_run(code) if state.shown else None
    except ClassError as error:
        say(error)
        return
    if asked is None:
        return
    # Compact, so that at 1280x720 the student's editor and the two graphs stay on screen:
    # the prompt beside the title, the verdict in one line, and the shown run's change
    # only, beside them.
    with st.container(border=True, key="class_challenge", gap="small"):
        mine, theirs = st.columns(2, gap="medium") if shown is not None else (st.container(), None)
        with mine:
            head = st.container(horizontal=True, vertical_alignment="center", gap="small")
            head.markdown(":material/assignment: **" + tr("The teacher's challenge {n}", n=asked.number)
                          + "**", width="content")
            head.text(challenge_prompt(asked))
            kept = st.session_state.get(VERDICT)
            if kept is not None and kept[:2] == (code, state.challenge):
                verdict_line(kept[2])
            else:
                st.caption(tr("Your editor is yours: change the code and press **Run** (Ctrl+Enter). "
                              "Each run goes to the teacher, checked on its graph."))
        if theirs is not None:
            with theirs, st.container(key="class_shown", gap="small"):
                head = st.container(horizontal=True, vertical_alignment="center", gap="small")
                said = (tr("**{shown}**, no name (passes): graph A, beside yours.", shown=tr(SHOWN_LABEL))
                        if shown.passes else
                        tr("**{shown}**, no name (fails): graph A, beside yours.", shown=tr(SHOWN_LABEL)))
                head.markdown(":material/co_present: " + said, width="content")
                with head.popover(tr("The whole script"), icon=":material/description:"):
                    st.code(shown.code, language="python", wrap_lines=True)
                # Its change to the challenge's code, where the answer is, in a few lines.
                st.code(change_of(asked.start, shown.code), language="diff", wrap_lines=True)


def change_of(start: str, source: str, context: int = 1) -> str:
    """The lines ``source`` changes in ``start``, as a unified diff's hunks without headers
    (``-`` taken out, ``+`` put in, one line of context around each): a shown run's answer in
    a few lines. The forward (or the whole script) when nothing differs line by line."""
    lines = list(difflib.unified_diff(start.splitlines(), source.splitlines(), lineterm="", n=context))
    hunks = [line for line in lines[2:] if not line.startswith("@@")]
    if not hunks:
        return forward_of(source)
    body = textwrap.dedent("\n".join(line[1:] for line in hunks)).split("\n")  # less indent
    return "\n".join(f"{line[0]}{text}" for line, text in zip(hunks, body, strict=True))


def forward_of(source: str) -> str:
    """The lines of a script's ``def forward``, to the end of its body; the whole script
    when it has none."""
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("def forward")), None)
    if start is None:
        return source
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip()
                and len(lines[i]) - len(lines[i].lstrip()) <= indent), len(lines))
    return textwrap.dedent("\n".join(lines[start:end])).rstrip()


def verdict_line(verdict: Verdict) -> None:
    """The check's verdict on the student's last run, in one line: passes or not, and the
    check's sentence (with why it fails), as text."""
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    if verdict.passes:
        row.markdown(":green-badge[:material/check_circle: " + tr("Your last run passes the check.") + "]",
                     width="content")
    else:
        row.markdown(":orange-badge[:material/pending: " + tr("Your last run does not pass yet.") + "]",
                     width="content")
    row.text(str(verdict.sentence) if verdict.passes else f"{verdict.sentence} {verdict.reason}".strip())


def shown_run(state: ClassState | None, code: str | None) -> Submission | None:
    """The run the teacher shows this class, if one is shown."""
    if state is None or not state.shown or code is None:
        return None
    try:
        return class_room().shown_run(code)
    except ClassError:
        return None


def comparison(source: str, picture: Picture) -> Comparison | None:
    """``hooks.CODE_COMPARISON``: on the Your code page, a run of the class as A beside this
    tab's own (B): for a student, the run the teacher shows; for the teacher, the tile they
    look at, else the run shown. None otherwise."""
    teacher = st.session_state.get(TEACHER)
    if teacher is not None:
        try:
            state = class_room().poll(teacher.code, None, False)
            looked = st.session_state.get(LOOKED)
            looking = state is not None and looked is not None and looked[0] == state.challenge
            found = class_room().gallery(teacher) if looking else None
        except ClassError:
            return None
        group = None if found is None else found.group(looked[1])
        if group is not None:
            return _beside(group.runs[0], source, picture, group.verdict, tr("My run"))
        code = teacher.code
    else:
        code = st.session_state.get(CLASS_CODE)
        kept = st.session_state.get(STATE)
        state = kept[1] if kept is not None else None
    if state is None or state.challenge is None:
        return None
    shown = shown_run(state, code)
    mine = tr("My run") if teacher is not None else tr("Your run")
    return _beside(shown, source, picture, tr(SHOWN_LABEL), mine)


def _beside(run: Submission | None, source: str, picture: Picture, a_label: str,
            b_label: str) -> Comparison | None:
    """A run of the class (A) beside this tab's own (B, ``source`` drawn as ``picture``), what
    differs coloured: nodes matched by structure, as the gallery's tiles count them, so the
    same op on another line is no difference; by id when B's picture is another graph of its
    film than the last."""
    if run is None or not run.built:
        return None
    a, _ = cached_code_picture(run.code)
    a_record, b_run = cached_code_run(run.code).film[-1], cached_code_run(source)
    if b_run.film and graph_of_record(b_run.film[-1]).by_id.keys() == picture.graph.by_id.keys():
        diff = difference(a_record, b_run.film[-1])
    else:
        diff = graph_diff(a.graph, picture.graph)
    return Comparison(a, diff, a_label, b_label)
