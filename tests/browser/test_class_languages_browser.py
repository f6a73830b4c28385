"""A class of three languages (#51), in Chromium: the teacher's browser in English, one
student's in Chinese (``locale="zh-CN"``), another's in Spanish (``locale="es-ES"``).

The teacher asks the lesson's question 1, then the ``.detach()`` challenge. Each student reads
both in their own language (the words read from the catalogs, not written here), answers and
runs code; both runs land in one gallery tile, and the class's CSV counts one question: both
answers under the step's id, each choice by its id. A verdict is kept by the class as a Message:
the Chinese student, reloaded in Spanish, reads it from the class store in Spanish. Screenshots
of each student's screen. No fixed sleeps: every wait is for a condition.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from playwright.sync_api import expect

from harness.class_drive import MAIN, go, see, start_class
from harness.drive import SHOTS, wait_for_run
from harness.editor import pick, retype_line, run_with_keys, text_in_editor
from stockdemo.classroom.challenges import CHALLENGES
from stockdemo.code.edits import EDITS
from stockdemo.i18n import catalog, speaking
from stockdemo.lessons import builtin_lesson

pytestmark = pytest.mark.browser

LOCALES = {"zh_CN": "zh-CN", "es": "es-ES"}  # the students' browsers
STEP = "h = self.cell(x[:, t], h)"
SOLVED_INLINE = "h = self.cell(x[:, t], h.detach())"


def said(lang: str, message: str, **values: object) -> str:
    """``message`` as the catalog of ``lang`` says it, as a browser shows it (no markdown stars)."""
    text = catalog(lang).gettext(message)
    return (text.format(**values) if values else text).replace("**", "")


def prose(markdown: str) -> str:
    """The longest stretch of a markdown sentence outside its code spans: text a page shows as is."""
    return max(markdown.split("`")[::2], key=len).strip()


def join_in(browser, link: str, lang: str):
    """A student's tab whose browser speaks ``lang``, opened on the join link."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale=LOCALES[lang])
    student = context.new_page()
    student.goto(link)
    wait_for_run(student)
    see(student, said(lang, "Class **{code}**: following the teacher.", code="X").split("X")[1].strip())
    return student


def test_each_student_reads_the_teachers_question_and_challenge_in_their_own_language(browser, server):
    first = builtin_lesson().steps[0]
    choice = first.ask.choices[0]
    detach = CHALLENGES["detach"]
    teacher, _, link = start_class(browser, server)  # the teacher's browser: English
    students = {lang: join_in(browser, link, lang) for lang in LOCALES}
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        # Question 1: each student reads it in their language, and answers it.
        teacher.goto(f"{server}/lesson?step=1")
        wait_for_run(teacher)
        teacher.get_by_role("button", name="Open answers").click()
        see(teacher, "connected have answered")
        for lang, student in students.items():
            question = catalog(lang).gettext(first.question)
            assert question != first.question
            see(student, prose(question))
            student.locator(f"{MAIN} [data-testid='stRadio']").get_by_text(choice, exact=True).click()
            student.get_by_role("button", name=said(lang, "Send my answer")).click()
            see(student, said(lang, "Your answer: **{answer}**. Wait for the teacher's reveal.",
                              answer=choice))
            student.screenshot(path=str(SHOTS / f"class-languages-{lang}-question.png"))
        see(teacher, re.compile(r"2\D+of\D+2\D+connected have answered"))

        # The .detach() challenge, from the teacher's loop: each reads it in their language.
        go(teacher, "code")
        loop = pick(teacher, "loop")
        teacher.locator(MAIN).get_by_text("Ask the class a challenge").click()
        teacher.locator(f"{MAIN} .st-key-class_ask_choice").get_by_role(
            "radio", name=EDITS["detach"].title, exact=True).click()
        teacher.get_by_role("button", name="Ask the class").click()
        see(teacher, "No run yet")
        for lang, student in students.items():
            see(student, said(lang, "The teacher's challenge {n}", n=1))
            prompt = catalog(lang).gettext(detach.prompt)
            assert prompt != detach.prompt
            expect(student.locator(f"{MAIN} .st-key-class_challenge")).to_contain_text(prompt, timeout=60_000)
            expect(student.locator(".ce-run")).to_be_enabled(timeout=60_000)
            assert text_in_editor(student) == loop

        # Both detach, on different lines: one graph.
        retype_line(students["zh_CN"], STEP, SOLVED_INLINE)
        retype_line(students["es"], STEP, "h = h.detach()")
        students["es"].keyboard.press("Enter")
        students["es"].keyboard.type(STEP)
        for student in students.values():
            run_with_keys(student)
        for lang, student in students.items():
            see(student, said(lang, "Your last run passes the check."), timeout=90_000)
            with speaking(lang):
                see(student, str(detach.check.sentence))  # the check's sentence, as the catalogs say it
            student.screenshot(path=str(SHOTS / f"class-languages-{lang}-challenge.png"))
        # The verdict is kept by the class as a Message: the Chinese student reloads in Spanish
        # and reads it, from the class store, in Spanish.
        zh = students["zh_CN"]
        zh.goto(zh.url + ("&" if "?" in zh.url else "?") + "lang=es")
        wait_for_run(zh)
        see(zh, said("es", "Your last run passes the check."), timeout=90_000)
        with speaking("es"):
            see(zh, str(detach.check.sentence))
        tiles = teacher.locator(f"{MAIN} [class*='st-key-class_tile_']")
        expect(tiles).to_have_count(1, timeout=60_000)
        expect(tiles.first).to_contain_text("2 · passes")  # one gallery, the teacher's English
        see(teacher, re.compile(r"2\s*ran"))
        teacher.locator(f"{MAIN} .st-key-class_gallery").scroll_into_view_if_needed()
        teacher.screenshot(path=str(SHOTS / "class-languages-teacher-gallery.png"))

        # The CSV: one question, both answers under its id and the choice's id.
        go(teacher, "classroom")
        teacher.locator(f"{MAIN} [data-testid='stDownloadButton']").wait_for(timeout=30_000)
        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download every answer (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
        answers = [r for r in rows if not r["question"].startswith("challenge")]
        assert [(r["question"], r["answer"]) for r in answers] == [(first.id, first.ask.choice_ids[0])] * 2
        assert sorted((r["question"], r["correct"]) for r in rows if r not in answers) == [
            ("challenge 1", "yes"), ("challenge 1", "yes")]
    finally:
        for page in (teacher, *students.values()):
            page.context.close()
