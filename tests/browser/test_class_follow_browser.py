"""The class follows the teacher's page in real browsers: the Lab with its settings, a Lesson step."""

from __future__ import annotations

import time

import pytest

from harness.class_drive import MAIN, go, join_by_link, see, start_class, wait_for_path
from harness.drive import screenshot, wait_for_run
from stockdemo.lesson import STEPS

pytestmark = pytest.mark.browser


def test_the_teacher_opening_the_lab_then_a_lesson_step_moves_the_followers_there(server, browser):
    teacher, code, link = start_class(browser, server)
    students = [join_by_link(browser, link)[0] for _ in range(2)]
    try:
        go(teacher, "lab")
        opened = time.perf_counter()
        for student in students:
            wait_for_path(student, "lab")
            see(student, "Different lengths")
        print(f"\nteacher opens the Lab -> {len(students)} students there: "
              f"{time.perf_counter() - opened:.2f} s")
        # ... with its settings: the experiment the teacher picks, and a slider the teacher moves
        teacher.get_by_role("tab", name="NaN").click()
        wait_for_run(teacher)
        for student in students:
            student.wait_for_function("() => new URL(location).searchParams.get('lab') == 'NaN'",
                                      timeout=30_000)
            wait_for_run(student)
            selected = student.get_by_role("tab", selected=True).inner_text()
            assert selected == "NaN"
        slider = teacher.locator(f"{MAIN} [data-testid='stSlider'] input[type='range']").first
        slider.focus()
        slider.press("ArrowRight")
        wait_for_run(teacher)
        wanted = slider.input_value()
        for student in students:
            student.wait_for_function(
                "v => document.querySelector(\"[data-testid='stMain'] [data-testid='stSlider'] "
                "input[type='range']\").value == v", arg=wanted, timeout=30_000)
        # Then the Lesson, one step on: the followers land on the teacher's step.
        go(teacher, "lesson")
        teacher.get_by_role("button", name="Next").click()
        wait_for_run(teacher)
        opened = time.perf_counter()
        for student in students:
            wait_for_path(student, "lesson")
            student.get_by_role("heading", name=f"2. {STEPS[1].title}").wait_for(timeout=30_000)
            assert "step=2" in student.url
            assert student.get_by_role("button", name="Next").is_disabled()
        print(f"teacher opens Lesson step 2 -> students there: {time.perf_counter() - opened:.2f} s")
        # A follower who breaks away explores; Follow brings them back to the teacher's page.
        students[0].get_by_role("button", name="Break away").click()
        wait_for_run(students[0])
        students[0].get_by_role("button", name="Next").click()
        wait_for_run(students[0])
        students[0].get_by_role("heading", name=f"3. {STEPS[2].title}").wait_for()
        students[0].get_by_role("button", name="Follow the teacher").click()
        students[0].get_by_role("heading", name=f"2. {STEPS[1].title}").wait_for(timeout=30_000)
        for page in (teacher, *students):
            assert not page.locator("[data-testid='stException']").count()
    finally:
        for name, page in zip(("teacher", *(f"student-{i}" for i in range(len(students)))),
                              (teacher, *students), strict=True):
            if not page.is_closed():
                screenshot(page, f"class-follow-{name}")
            page.context.close()


def test_a_teachers_reload_keeps_the_class_and_the_key_stays_in_that_tab(server, browser):
    teacher, code, link = start_class(browser, server)
    student, wire = join_by_link(browser, link, wire=True)
    try:
        key = teacher.locator(f"{MAIN} [data-testid='stExpander']").filter(
            has_text="Teacher key").first
        key.click()
        secret = key.locator("[data-testid='stCode']").inner_text().strip()
        go(teacher, "lesson")
        teacher.reload()  # a new session: the tab hands the key back
        wait_for_run(teacher)
        see(teacher, "You are teaching class")
        teacher.get_by_role("button", name="Next").click()
        wait_for_run(teacher)
        wait_for_path(student, "lesson")
        student.get_by_role("heading", name=f"2. {STEPS[1].title}").wait_for(timeout=30_000)
        other = browser.new_context().new_page()  # another tab of the same browser is not the teacher
        other.goto(f"{server}/classroom")
        wait_for_run(other)
        other.get_by_role("button", name="Start a class").wait_for()
        other.context.close()
        assert not wire.contains(secret)  # the key never went to a student
    finally:
        for page in (teacher, student):
            page.context.close()
