"""The teacher's side of a challenge, on the Your code page: "Ask the class", then the gallery.

The gallery groups the class's latest runs by the graph they built (one tile per shape,
largest first, its verdict, what it adds to or takes from the teacher's own run), says
the share passing, the time to the first pass, who has not run yet, and errors grouped by
message; a tile's "Show the class" puts that run beside every student's own, without a
name. Seat numbers are the only names here, and presenting hides them. Every string a
student wrote (code, op names, errors) is drawn as text, never as markup.
"""

from __future__ import annotations

import re
from collections import Counter

import streamlit as st

from stockdemo.classroom import ClassError, Gallery, Group, Teacher
from stockdemo.classroom.challenges import CHALLENGES, PROMPT, difference
from stockdemo.code.edits import EDITS
from stockdemo.code.link import code_to_link
from stockdemo.config import CODE
from stockdemo.graph.diff import GraphDiff
from stockdemo.render.poster import MAX_BOXES, thumbnail_svg
from stockdemo.ui import keys
from stockdemo.ui.caches import cached_code_picture, cached_code_run
from stockdemo.ui.classmode.challenge import CODE_PAGE, FROM_LESSON, check_of
from stockdemo.ui.classmode.keys import ASK_CHOICE, ASK_PROMPT, CONSOLE_MESSAGE, GALLERY_DRAWN, LOOKED
from stockdemo.ui.classmode.session import class_lesson, class_room, say, teacher
from stockdemo.ui.routes import ROOT, presenting

GALLERY_S = 1.0  # the gallery's refresh: runs arrive live
OWN = "A question of my own"
TILES = 8  # tiles drawn (two rows of four fit a 1280x720 projector); the rest are counted
TILES_PER_ROW = 4
ERRORS = 4  # error messages listed; the rest are counted
THUMB_W, THUMB_H = 240, 44  # px: a tile's drawing of its graph (a tile is ~250 px wide at 1280)


def teacher_console(current: Teacher) -> None:
    """On the teacher's Your code page: "Ask the class" while no challenge is open, the
    gallery while one is."""
    if CONSOLE_MESSAGE in st.session_state:
        say(st.session_state.pop(CONSOLE_MESSAGE))
    try:
        state = class_room().poll(current.code, None, False)
    except ClassError as error:
        say(error)
        return
    if state is None:
        return
    st.session_state[GALLERY_DRAWN] = (state.challenge, state.shown, st.session_state.get(LOOKED))
    if state.challenge is None:
        ask_box(current)
    else:
        gallery_box(current)


def ask_box(current: Teacher) -> None:
    """Pick a ready-made edit as the goal, or write a prompt; every student's editor unlocks,
    starting from the teacher's code on screen."""
    titles = {CHALLENGES[name].title: name for name in EDITS if name in CHALLENGES}
    with st.expander(":material/assignment: Ask the class a challenge", expanded=False):
        choice = st.pills("The goal", [*titles, OWN], key=ASK_CHOICE, selection_mode="single",
                          default=next(iter(titles)),
                          help="A ready-made edit's goal, with its check on the graph; or your "
                               "own words, checked only for a run that draws a graph.")
        if choice is None:
            return
        if choice == OWN:
            st.text_area("Your question", key=ASK_PROMPT, max_chars=400,
                         placeholder="Detach the hidden state, then run it.")
        else:
            st.text(CHALLENGES[titles[choice]].prompt)
        st.button("Ask the class", key="class_ask", type="primary", icon=":material/campaign:",
                  on_click=_ask, args=(current, titles.get(choice, PROMPT)),
                  help="Every student's editor unlocks on the code you have now, with the "
                       "question above it. Your own run stays the reference.")


def lesson_challenge(challenge_id: str, source: str) -> bool | None:
    """``hooks.LESSON_CHALLENGE``: on a Lesson step with a challenge, the class's teacher asks
    it from here, starting from its code, and goes to Your code, where the gallery fills (the
    class follows). None for anyone else."""
    current = teacher()
    lesson = class_lesson()
    asked = None if lesson is None else lesson.challenges().get(challenge_id)
    if current is None or asked is None:
        return None
    if st.button(f"Ask the class: {asked.title}", key="lesson_ask", type="primary",
                 icon=":material/campaign:",
                 help="Every student's editor unlocks on this step's code, with the question above "
                      "it; you see their graphs come in, grouped, on Your code."):
        try:
            class_room().ask(current, FROM_LESSON + challenge_id, asked.title, asked.prompt, source)
        except ClassError as error:
            say(error)
            return True
        st.switch_page(str(ROOT / CODE_PAGE), query_params={CODE.name: code_to_link(source) or ""})
    return True


def _ask(current: Teacher, challenge_id: str) -> None:
    if challenge_id == PROMPT:
        prompt = (st.session_state.get(ASK_PROMPT) or "").strip()
        if not prompt:
            st.session_state[CONSOLE_MESSAGE] = ClassError("Write the question first.")
            return
        title = "Your question"
    else:
        prompt, title = CHALLENGES[challenge_id].prompt, CHALLENGES[challenge_id].title
    start = st.session_state.get(keys.CODE_TEXT) or CHALLENGES[challenge_id].start
    try:
        class_room().ask(current, challenge_id, title, prompt, start)
    except ClassError as error:
        st.session_state[CONSOLE_MESSAGE] = error


def _close(current: Teacher) -> None:
    try:
        class_room().close_challenge(current)
    except ClassError as error:
        st.session_state[CONSOLE_MESSAGE] = error


def _look(shape: str, looked: bool) -> None:
    number = st.session_state.get(GALLERY_DRAWN, (None,))[0]
    if looked:
        st.session_state.pop(LOOKED, None)
    else:
        st.session_state[LOOKED] = (number, shape)


def _show(current: Teacher, shape: str | None) -> None:
    try:
        class_room().show(current, shape)
    except ClassError as error:
        st.session_state[CONSOLE_MESSAGE] = error


def gallery_box(current: Teacher) -> None:
    """The open challenge's gallery, live."""
    with st.container(border=True, key="class_gallery"):
        _gallery(current)


@st.fragment(run_every=GALLERY_S)
def _gallery(current: Teacher) -> None:
    try:
        state = class_room().poll(current.code, None, False)
        found = class_room().gallery(current)
        shown = class_room().shown_run(current.code)
    except ClassError as error:
        say(error)
        return
    now = None if state is None else (state.challenge, state.shown, st.session_state.get(LOOKED))
    if found is None or st.session_state.get(GALLERY_DRAWN) != now:
        # Closed, or another run shown or looked at: the page whole (the ask box; the run
        # beside the teacher's).
        st.rerun(scope="app")
    hidden = presenting()
    asked = found.challenge
    head = st.container(horizontal=True, vertical_alignment="center", gap="small")
    head.markdown(f":material/assignment: **Challenge {asked.number}**")
    head.text(asked.title)
    head.button("Close the challenge", key="class_close", icon=":material/lock:", on_click=_close,
                args=(current,), help="Students' editors follow your code again; their runs are "
                                      "kept for the results.")
    if shown is not None:
        head.button("Stop showing", key="class_unshow", icon=":material/visibility_off:",
                    on_click=_show, args=(current, None))
    head.markdown(" · ".join(summary(found, hidden)), width="content")
    if not found.submissions:
        st.caption("No run yet: the tiles come in as students press Run.")
        return
    reference = cached_code_run(st.session_state.get(keys.CODE_TEXT) or asked.start)
    groups = found.groups[:TILES]
    rows = st.container(gap="small")
    for start in range(0, len(groups), TILES_PER_ROW):
        row = rows.columns(TILES_PER_ROW, gap="small")
        for column, (i, group) in zip(row, enumerate(groups[start:start + TILES_PER_ROW], start),
                                      strict=False):
            with column:
                tile(current, group, i, reference.graph, hidden,
                     shown is not None and shown.code == group.runs[0].code,
                     st.session_state.get(LOOKED) == (asked.number, group.key))
    if len(found.groups) > TILES:
        rest = found.groups[TILES:]
        st.caption(f"and {len(rest)} more graphs, {sum(g.count for g in rest)} runs")
    if found.errors:
        # The count, and beside it a message a line (a student's words, as typed).
        lines = [f"{n}: {message}" for message, n in found.errors[:ERRORS]]
        if len(found.errors) > ERRORS:
            lines.append(f"and {len(found.errors) - ERRORS} other messages")
        row = st.container(horizontal=True, gap="medium")
        row.markdown(f"**Errors**: {sum(n for _, n in found.errors)} runs built no graph", width="content")
        row.text("\n".join(lines))
    if not hidden:
        st.caption(f"Checked on each run's graph: {check_of(asked.id, asked.prompt).check.sentence}")


def summary(found: Gallery, hidden: bool) -> list[str]:
    """The gallery's figures: runs in, share passing, time to the first pass, who waits."""
    share = found.share_passing
    first = found.first_pass_s
    parts = [f"**{found.count}** ran", f"**{found.passing}** pass"
             + ("" if share is None else f" ({share:.0%})"),
             "first pass " + ("not yet" if first is None else f"after **{first:.0f} s**")]
    if found.waiting:
        who = "" if hidden else ": seat " + ", ".join(str(s) for s in found.waiting)
        parts.append(f"**{len(found.waiting)}** connected, not run yet{who}")
    return parts


def tile(current: Teacher, group: Group, i: int, reference: dict | None, hidden: bool,
         on_show: bool, looked: bool) -> None:
    """One graph the class built: how many, the verdict, its difference from the teacher's run.
    Its verdict is a button: the teacher's graph then has this run beside it, what differs
    ringed (compare mode), on the teacher's screen alone. Small enough that two rows of four
    fit a 1280x720 projector."""
    with st.container(border=True, key=f"class_tile_{i}", gap=None):
        row = st.container(horizontal=True, vertical_alignment="center", gap="small")
        icon = ":material/check_circle:" if group.passes else ":material/cancel:"
        row.button(group.verdict, key=f"class_look_{i}", icon=icon, type="primary" if looked else "tertiary",
                   on_click=_look, args=(group.key, looked),
                   help="Beside your run, this one's graph, what differs ringed: on your screen only.")
        if on_show:
            row.caption(":material/co_present: shown", width="content")
        else:
            row.button("Show", key=f"class_show_{i}", icon=":material/co_present:",
                       on_click=_show, args=(current, group.key), type="tertiary",
                       help="Show the class this run's code and graph beside each student's "
                            "own, without a name.")
        run = cached_code_run(group.runs[0].code)
        record = run.graph if run.film else None
        diff = None if record is None or reference is None else difference(reference, record)
        words = plain(difference_words(diff, record))
        picture = cached_code_picture(group.runs[0].code)[0] if record is not None else None
        if picture is not None and len(picture.nodes) <= MAX_BOXES:
            # Its graph small, what it adds to the teacher's ringed (compare mode's colour), and
            # in words what it adds and takes, as the image's caption. (Past MAX_BOXES boxes
            # an SVG a second costs more than a tile is worth: the words alone.)
            added = {n.id for n in diff.added_nodes} if diff is not None else set()
            st.image(thumbnail_svg(picture, added, THUMB_W, THUMB_H), caption=words,
                     alt=f"Its graph: {picture.counts.nodes} nodes, {len(added)} not in yours, ringed.")
        else:
            st.caption(words)
        if not hidden:
            st.caption("seat " + ", ".join(str(s) for s in group.seats))


def difference_words(diff: GraphDiff | None, record: dict | None) -> str:
    """What a run's graph adds to and takes from the teacher's (``diff``, None without the
    teacher's), its two largest changes by op: "+1 Add · −4 Tanh"."""
    if record is None:
        return "no graph"
    if diff is None:
        return f"{len(record['nodes'])} nodes"
    changes = [(n, f"{sign}{n} {op}") for sign, nodes in (("+", diff.added_nodes), ("−", diff.removed_nodes))
               for op, n in Counter(_short(x.op or x.kind) for x in nodes).items()]
    if not changes:
        return "the same graph as yours"
    changes.sort(key=lambda c: -c[0])
    words = [w for _, w in changes[:2]]
    return " · ".join(words) + (" …" if len(changes) > 2 else "")


def _short(op: str) -> str:
    """An op's name without autograd's suffix: "AddmmBackward0" -> "Addmm"."""
    return op.removesuffix("Backward0").removesuffix("Backward1") or op


def plain(text: str) -> str:
    """Text for markdown, every ASCII punctuation mark escaped: drawn as typed, never as markup."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)
