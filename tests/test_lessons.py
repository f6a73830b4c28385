"""Lessons as files: ours read from lessons/dynamic-graphs.toml is today's lesson; every shipped
lesson answers live through the parser and the sandbox; bad files are refused at their line and
key; links are bounded; a lesson's code runs only in the sandbox.

Today's lesson is frozen in tests/lessons/dynamic-graphs-main.json, computed live from main's
``stockdemo/lesson.py`` before the lesson became a file (its ``made_by`` says how).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from harness.helpers import ROOT
from stockdemo.code.link import pack
from stockdemo.config import LESSON
from stockdemo.lessons import (
    LessonError,
    builtin_lesson,
    lesson_from_link,
    lesson_to_link,
    open_lesson,
    parse_lesson,
    shipped,
    shipped_lesson,
)
from stockdemo.lessons.lines import KeyLines
from stockdemo.lessons.schema import MAX_BYTES
from stockdemo.sandbox import run_code

FROZEN = json.loads((ROOT / "tests" / "lessons" / "dynamic-graphs-main.json").read_text(encoding="utf-8"))
BAD = sorted((ROOT / "tests" / "lessons" / "bad").glob("*.toml"))
EXPECTED = re.compile(r"# refused at line (\d+), key (\S+): (.*)")
ESCAPED = Path("/tmp/stockdemo-lesson-escaped")


def test_ours_read_from_its_file_has_todays_steps_words_questions_and_links():
    steps = builtin_lesson().steps
    assert len(steps) == len(FROZEN["steps"]) == 10
    for number, (old, step) in enumerate(zip(FROZEN["steps"], steps, strict=True), 1):
        now = {"title": step.title, "context": step.context, "question": step.question, "page": step.page,
               "link_label": step.link_label, "query": step.query, "kind": step.ask.kind, "low": step.ask.low,
               "high": step.ask.high, "choices": list(step.ask.choices),
               "challenge": step.challenge.id if step.challenge else None}
        assert now == {k: old[k] for k in now}, f"step {number}"


@pytest.mark.parametrize("number", range(1, 11))
def test_each_step_of_ours_answers_live_as_today(number):
    answer = builtin_lesson().steps[number - 1].reveal()
    assert {"label": answer.label, "value": answer.value, "detail": answer.detail} == \
        FROZEN["steps"][number - 1]["answer"]


@pytest.mark.parametrize("name", [n for n in shipped() if n != "dynamic-graphs"])
def test_every_step_of_a_shipped_lesson_answers_live_through_the_parser_and_the_sandbox(name):
    lesson = parse_lesson((ROOT / "lessons" / f"{name}.toml").read_bytes())
    assert lesson == shipped_lesson(name) and lesson.id == name
    for step in lesson.steps:
        answer = step.reveal()
        assert answer.value != "not run here", (step.id, answer.detail)
        assert step.ask.correct(answer.value) is not None, (step.id, answer.value)  # one of its answers
        assert "?" not in answer.label and "{" not in answer.detail, step.id


def challenges() -> list:
    return [(name, c) for name in shipped() for c in shipped_lesson(name).challenges().values()]


@pytest.mark.parametrize("name, challenge", challenges(), ids=[f"{n}: {c.id}" for n, c in challenges()])
def test_each_shipped_challenge_passes_its_reference_answer_and_fails_its_start(name, challenge):
    assert challenge.check.verdict(challenge.answer, run_code).passes
    verdict = challenge.check.verdict(challenge.start, run_code)
    assert not verdict.passes and verdict.reason


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_a_bad_lesson_file_is_refused_with_its_line_and_key(path):
    raw = path.read_bytes()
    line, key, words = EXPECTED.match(raw.split(b"\n", 1)[0].decode()).groups()
    with pytest.raises(LessonError) as refused:
        parse_lesson(raw)
    assert (refused.value.line, refused.value.key) == (int(line), key)
    assert words in refused.value.message and str(refused.value).startswith(f"line {line}, {key}: ")


def test_thirty_bad_files_or_more_and_the_parser_still_reads_every_shipped_lesson_after_them():
    assert len(BAD) >= 30
    for path in BAD:
        with pytest.raises(LessonError):
            parse_lesson(path.read_bytes())
    for name in shipped():
        assert parse_lesson((ROOT / "lessons" / f"{name}.toml").read_text(encoding="utf-8")).id == name


def test_mutated_lesson_text_gives_a_lesson_or_a_lesson_error_never_anything_else():
    marks = ["[", "]", "{", "}", '"', "'", "'''", "=", "\n", "#", ".", ",", "\x00", "\ud800", "é", "1e999"]
    rng = random.Random(52)
    for name in shipped():
        text = (ROOT / "lessons" / f"{name}.toml").read_text(encoding="utf-8")
        for _ in range(150):
            at = rng.randrange(len(text))
            mutated = rng.choice([
                text[:at] + rng.choice(marks) + text[at:],
                text[:at] + text[at + rng.randrange(1, 40):],
                text[:at] + text[at:at + 200] * 3 + text[at:],
            ])
            try:
                parse_lesson(mutated)
            except LessonError as err:
                assert err.line >= 1 and err.key and err.message


def test_a_lesson_link_round_trips_and_one_past_its_bound_or_broken_is_refused_without_raising():
    text = shipped_lesson("transformer-block").text
    link = lesson_to_link(text)
    assert link is not None and lesson_from_link(link) == (text, None)
    assert open_lesson(link)[0] == shipped_lesson("transformer-block")
    too_long, message = lesson_from_link("A" * (LESSON.max_len + 1))
    assert too_long is None and f"{LESSON.max_len:,} characters" in message
    bomb = pack("x" * (MAX_BYTES * 50), MAX_BYTES * 100, LESSON.max_len)  # small link, huge text
    assert bomb is not None and lesson_from_link(bomb)[0] is None
    assert lesson_from_link(link[:-7])[1] is not None and lesson_from_link("!!notbase64!!")[0] is None
    lesson, message = open_lesson(lesson_to_link((BAD[0]).read_text(encoding="utf-8")))
    assert lesson is None and "Line" in message and "the built-in lesson is shown" in message
    assert lesson_to_link("x" * (MAX_BYTES + 1)) is None


def test_code_that_tries_to_escape_parses_runs_only_in_the_sandbox_and_is_refused_there():
    ESCAPED.unlink(missing_ok=True)
    lesson = parse_lesson((ROOT / "tests" / "lessons" / "escape.toml").read_bytes())
    (step,) = lesson.steps
    answer = step.reveal()
    assert answer.value == "not run here" and "stopped" in answer.detail
    verdict = step.challenge.check.verdict(step.challenge.answer, run_code)
    assert not verdict.passes and "stopped" in str(verdict.reason)
    assert not ESCAPED.exists()  # nothing in a lesson ran in this process, and the sandbox refused it


def test_a_keys_line_is_found_in_headers_dotted_keys_inline_tables_and_after_multiline_strings():
    text = ('id = "x"  # key = 1 in a comment\n[[steps]]\nid = "a"\n[steps.settings]\ncode = """\n'
            'low = 5\n"""\n[steps.question]\nlow = 0\n[[steps]]\nq.low = 3\n'
            'check = { all = [{ fact = "path" },\n  { not = { fact = "draws" } }] }\n')
    lines = KeyLines(text)
    keys = ("id", "steps[0].id", "steps[0].question.low", "steps[1].q.low", "steps[1].check.all[1].not.fact",
            "steps[1].nothing")
    assert [lines.line_of(k) for k in keys] == [1, 3, 9, 11, 13, 10]


def test_docs_lesson_md_shows_every_measure_and_every_fact_with_an_example():
    from stockdemo.lessons.checks import FACTS
    from stockdemo.lessons.measures import MEASURES

    text = (ROOT / "docs" / "lesson.md").read_text(encoding="utf-8")
    assert all(f"| `{name}` |" in text for name in MEASURES)
    assert all(re.search(rf'\| `{name}`[^|]*\| `\{{ fact = "{name}"', text) for name in FACTS)
    assert all(f"lessons/{name}.toml" in text for name in shipped())
