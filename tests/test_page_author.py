"""Write a lesson (pages/author.py) through AppTest: a lesson file in the editor, each step's
answer computed live beside it, each challenge's check tried on its reference answer and its
starting code, a refused file at its line and key, and the lesson out as a link or to a class.

Counts are checked against torch's own walk of the lesson's code (``harness.torch_walk``),
verdicts against what torch says of the two programs, refusals against ``parse_lesson``.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

from harness.autograd import ops_by_type
from harness.helpers import ROOT, graph_sent, send_from_view, view_element
from harness.torch_walk import here
from stockdemo.authoring import REFERENCE_FAILS, START_PASSES
from stockdemo.lessons import LessonError, lesson_from_link, parse_lesson, shipped_lesson
from stockdemo.ui.classmode import session as class_session

AUTHOR = str(ROOT / "pages" / "author.py")
LESSON_PAGE = str(ROOT / "pages" / "lesson.py")
TRANSFORMER = "transformer-block"
EDITOR = "lesson_editor"


def author(lesson: str = TRANSFORMER) -> AppTest:
    """The page opened on a link to one of our lessons (``?lesson=transformer-block``)."""
    at = AppTest.from_file(AUTHOR, default_timeout=300)
    at.query_params["lesson"] = lesson
    return at.run()


def preview(at: AppTest, text: str) -> AppTest:
    """The author typed ``text`` into the editor and pressed Preview (Ctrl+Enter)."""
    n = graph_sent(view_element(at, EDITOR))["ran"] + 1
    return send_from_view(at, key=EDITOR, trigger={"run": {"code": text, "n": n}})


def said(at: AppTest) -> list[str]:
    return [e.value for kind in ("markdown", "warning", "error", "caption") for e in getattr(at, kind)]


def ops_here(source: str) -> Counter:
    """The program run here: torch's own autograd nodes behind its predictions, by type."""
    ran = here(source)
    assert ran.error is None, ran.error
    return Counter(ops_by_type(ran.predictions))


def test_each_step_of_the_transformer_lesson_shows_its_live_answer_and_each_check_its_trial():
    lesson = shipped_lesson(TRANSFORMER)
    at = author()
    assert not at.exception, [e.message for e in at.exception]
    sent = graph_sent(view_element(at, EDITOR))
    assert sent["doc"] == lesson.text and sent["language"] == "toml" and sent["error"] is None
    assert len(at.metric) == len(lesson.steps)  # an answer a step, in order
    heads, mask = lesson.steps[0], lesson.steps[1]
    softmaxes = ops_here(heads.settings.source)["SoftmaxBackward0"]
    assert softmaxes == 4 and at.metric[0].value == str(softmaxes)  # one per head, torch says
    gained = sum(ops_here(mask.challenge.answer).values()) - sum(ops_here(mask.challenge.start).values())
    assert at.metric[1].value == f"+{gained}"  # the mask's nodes, counted by torch's walk
    # Each challenge: torch says its reference answer has what the check asks, and its
    # starting code has not; the preview says both passed and failed so, and warns of nothing.
    one_softmax = ops_here(heads.challenge.answer)["SoftmaxBackward0"]
    assert one_softmax == 1 and ops_here(heads.challenge.start)["SoftmaxBackward0"] == 4
    assert ops_here(mask.challenge.answer)["MaskedFillBackward0"] == 4
    assert not ops_here(mask.challenge.start)["MaskedFillBackward0"]
    text = said(at)
    assert text.count("The reference answer passes the check.") == len(lesson.challenges()) == 2
    assert text.count("The starting code fails the check, as it should.") == 2
    assert not at.warning


def test_a_check_the_starting_code_passes_or_the_reference_fails_is_warned_of():
    lesson = shipped_lesson(TRANSFORMER)
    lax = '{ fact = "op", op = "SoftmaxBackward0" }'  # the starting code has four
    strict = '{ fact = "op", op = "CopySlices" }'  # nothing in the reference answer writes in place
    text = lesson.text.replace(
        'check = { all = [{ fact = "count", op = "SoftmaxBackward0", equals = 1 }, '
        '{ fact = "output_shape", shape = [4, 8] }] }', f"check = {lax}").replace(
        'check = { any = [{ fact = "op", op = "MaskedFillBackward0" }, '
        '{ fact = "op", op = "WhereBackward0" }] }', f"check = {strict}")
    assert text.count(lax) == 1 and text.count(strict) == 1
    assert not ops_here(lesson.steps[1].challenge.answer)["CopySlices"]  # torch: no in-place write
    at = preview(author(), text)
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert str(START_PASSES) in warnings
    assert any(w.startswith(REFERENCE_FAILS.split("{")[0]) for w in warnings), warnings
    assert len(warnings) == 2
    assert graph_sent(view_element(at, EDITOR))["ran"] == 1  # the Preview pressed was answered


def test_a_refused_lesson_names_its_line_and_key_and_the_editor_marks_that_line():
    lesson = shipped_lesson(TRANSFORMER)
    text = lesson.text.replace('id = "mask"', 'id = "mask"\ncolour = "blue"', 1)
    with pytest.raises(LessonError) as refused:
        parse_lesson(text)
    err = refused.value
    assert "colour" in text.splitlines()[err.line - 1] and "colour" in err.key
    at = preview(author(), text)
    assert not at.exception
    assert [e.value for e in at.error] == [f"Line {err.line}, {err.key}: {err.message}"]
    sent = graph_sent(view_element(at, EDITOR))
    assert sent["error"]["line"] == err.line
    assert not at.metric  # no preview of a lesson that was refused


def test_the_lessons_link_opens_it_on_the_lesson_page():
    lesson = shipped_lesson(TRANSFORMER)
    at = author()
    link = next(c.value for c in at.code if "lesson=" in c.value)
    assert link.startswith("/lesson?lesson=")
    value = re.search(r"lesson=([^&]+)", link)[1]
    assert lesson_from_link(value) == (lesson.text, None)
    opened = AppTest.from_file(LESSON_PAGE, default_timeout=120)
    opened.query_params["lesson"] = value
    opened.run()
    assert not opened.exception
    assert opened.header[0].value == f"1. {lesson.steps[0].title}"


def test_teach_it_starts_a_class_with_the_lesson_written_here():
    lesson = shipped_lesson(TRANSFORMER)
    text = lesson.text.replace('title = "A Transformer block, seen as a graph"',
                               'title = "My own block"', 1)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)  # the app's pages, registered
    at.switch_page("pages/author.py").run()
    at = preview(at, text)
    at.button(key="author_teach").click().run()  # on to the Class page, the lesson picked
    assert not at.exception
    at.switch_page("pages/classroom.py").run()  # (AppTest runs the page it was told, after)
    assert at.selectbox(key="class_start_lesson").value == "own"
    assert any("My own block" in c.value for c in at.caption)
    at.button(key="class_start").click().run()
    teacher = at.session_state["class_teacher"]
    room = class_session.class_room()
    state = room.poll(teacher.code, None, False)
    assert room.lesson(teacher.code, state.lesson).text == text
