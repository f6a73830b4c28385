"""The Class page keeps the promise of its first sentence, as a teacher and two students do it.

"Teacher: press Start a class and put the code on the projector; students open the
link or type the code, and watch their page follow yours. Open a question: they
answer before you reveal the live answer, and the results are yours to keep."

At 1440x900, and at 1280x720 in presenter mode (?present=1), the teacher's
projector: the code is on screen, the students' pages follow, their answers come
in before the reveal, the reveal shows them the live answer beside their guess,
and the Class page keeps the results (the summary and the CSV).
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from harness.class_drive import MAIN, go, join_by_link, on_screen, report_on, see, wait_for_path
from harness.drive import screenshot, wait_for_run
from stockdemo.lesson import STEPS

pytestmark = pytest.mark.browser

QUESTION = 3


@pytest.mark.parametrize(("width", "height", "query"), [(1440, 900, ""), (1280, 720, "?present=1")],
                         ids=["1440x900", "1280x720-presenter"])
def test_start_a_class_the_students_follow_answer_before_the_reveal_and_the_results_stay(
        server, browser, width, height, query):
    context = browser.new_context(viewport={"width": width, "height": height})
    teacher = context.new_page()
    pages = [teacher]
    try:
        # "press Start a class and put the code on the projector"
        teacher.goto(f"{server}/classroom{query}")
        wait_for_run(teacher)
        teacher.get_by_role("button", name="Start a class").click()
        code_text = teacher.locator(MAIN).get_by_text(re.compile(r"^[A-Z0-9]{4}-[A-Z0-9]{4}$")).first
        code_text.wait_for(timeout=60_000)
        assert on_screen(teacher, code_text)  # the projector shows it without scrolling
        assert float(code_text.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 40
        code = code_text.inner_text().replace("-", "")
        link = teacher.locator(f"{MAIN} [data-testid='stCode']").filter(has_text="class=").first.inner_text()
        # "students open the link or type the code"
        by_link, _ = join_by_link(browser, link)
        pages.append(by_link)
        typed = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        report_on(typed)
        pages.append(typed)
        typed.goto(f"{server}/classroom")
        wait_for_run(typed)
        joining = typed.locator(f"{MAIN} [data-testid='stForm'] [data-testid='stTextInput'] input")
        joining.first.fill(code.lower())
        typed.get_by_role("button", name="Join the class").click()
        see(typed, "following the teacher")
        students = [by_link, typed]
        # "and watch their page follow yours"
        go(teacher, "lesson")
        for _ in range(QUESTION - 1):
            teacher.get_by_role("button", name="Next").click()
            wait_for_run(teacher)
        heading = f"{QUESTION}. {STEPS[QUESTION - 1].title}"
        teacher.get_by_role("heading", name=heading).wait_for()
        for student in students:
            wait_for_path(student, "lesson")
            student.get_by_role("heading", name=heading).wait_for(timeout=30_000)
            # The Lesson's first sentence names a student's own button, not the page's reveal.
            see(student, "press Send my answer")
            assert "Reveal the answer" not in student.locator(MAIN).inner_text()
        assert "Reveal the answer" not in teacher.locator(MAIN).inner_text()
        # "Open a question: they answer before you reveal the live answer"
        teacher.get_by_role("button", name="Open answers").click()
        live = STEPS[QUESTION - 1].reveal()
        for student, guess in zip(students, ("4", "5"), strict=True):
            box = student.locator(f"{MAIN} [data-testid='stForm'] input[type='number']")
            box.wait_for(timeout=60_000)
            assert live.detail not in student.locator(MAIN).inner_text()  # not before the reveal
            box.fill(guess)
            student.get_by_role("button", name="Send my answer").click()
            see(student, f"Your answer: {guess}")
        answered = teacher.locator(MAIN).get_by_text(re.compile(r"2 of \d+ connected have answered"))
        answered.wait_for(timeout=30_000)
        reveal = teacher.get_by_role("button", name="Reveal now")
        assert on_screen(teacher, reveal)
        reveal.click()
        see(teacher, "Median time to answer", timeout=60_000)
        teacher.locator(f"{MAIN} .js-plotly-plot").wait_for(timeout=30_000)  # laid out, all of it
        right = teacher.locator(f"{MAIN} [data-testid='sdMetric']").filter(has_text="Right")
        assert on_screen(teacher, right), right.bounding_box()  # the projector shows it as it is
        for student, guess in zip(students, ("4", "5"), strict=True):
            figure = student.locator("[data-testid='stMetric']").filter(has_text=live.label)
            figure.wait_for(timeout=60_000)
            assert on_screen(student, figure)
            shown = student.locator("[data-testid='stMetric']").all_inner_texts()
            assert any("Your guess" in m and guess in m for m in shown)
        screenshot(teacher, f"class-promise-{width}x{height}")
        # "and the results are yours to keep"
        go(teacher, "classroom")
        summary = teacher.locator(f"{MAIN} [data-testid='stDataFrame']")
        summary.wait_for(timeout=30_000)
        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download every answer (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
        assert sorted(r["answer"] for r in rows) == ["4", "5"]
        assert {r["question"] for r in rows} == {STEPS[QUESTION - 1].id}  # the step's id, in any language
        for page in pages:
            assert not page.locator("[data-testid='stException']").count()
    finally:
        for i, page in enumerate(pages):
            screenshot(page, f"class-promise-{width}x{height}-tab-{i}")  # the last state of each tab
            page.context.close()
