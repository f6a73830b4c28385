"""A class runs a teacher's own lesson (#52), in Chromium: the Transformer block, uploaded.

The teacher uploads ``lessons/transformer-block.toml`` on the Class page and starts a class;
two students join by the link. The teacher asks step 2's question ("What a mask changes"):
the students answer on their Lesson page, which shows the uploaded lesson's step, and the
teacher reveals the live answer. Then the teacher asks step 2's challenge: both students'
editors open on its starting code, both write the causal mask (one inline, one on a line of
its own: one graph), and the teacher's gallery shows one tile, "2 · passes". One student
types more and reloads: their editor holds their code, typing included, and their verdict is
above it. Screenshots of each screen. No fixed sleeps: every wait is for a condition.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from harness.autograd import grad_fns
from harness.class_drive import MAIN, join_by_link, see
from harness.drive import SHOTS, wait_for_run
from harness.editor import retype_line, run_with_keys, text_in_editor, wait_for_text
from harness.torch_walk import here
from stockdemo.lessons import shipped_lesson
from stockdemo.lessons.files import lesson_files

pytestmark = pytest.mark.browser

TRANSFORMER = "transformer-block"
SOFTMAX = "weights = torch.softmax(scores, dim=-1)"
LATER = "later = torch.ones(6, 6, dtype=torch.bool).triu(1)"
# Two ways to write one causal mask: inline, and on a line of its own.
INLINE = ("weights = torch.softmax(scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), "
          'float("-inf")), dim=-1)')
OWN_LINE = 'weights = torch.softmax(scores.masked_fill(later, float("-inf")), dim=-1)'
UNSENT = "  # typed after the run, not run"


def start_class_with(browser, server: str, lesson_file, viewport=(1440, 900)):
    """A teacher's tab: the Class page, a lesson file uploaded, a class started -> (page, join link)."""
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    teacher = context.new_page()
    teacher.goto(f"{server}/classroom")
    wait_for_run(teacher)
    teacher.locator(f"{MAIN} [data-testid='stSelectbox']").filter(has_text="Lesson").click()
    teacher.get_by_role("option", name=re.compile("Your own lesson")).click()
    wait_for_run(teacher, ready="[data-testid='stFileUploaderDropzone']")
    teacher.get_by_test_id("stFileUploaderDropzone").locator("input[type=file]").set_input_files(lesson_file)
    lesson = shipped_lesson(TRANSFORMER)
    see(teacher, f"{lesson.title}: {len(lesson.steps)} steps")
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=str(SHOTS / "class-lesson-uploaded.png"))
    teacher.get_by_role("button", name="Start a class").click()
    see(teacher, "Join link")
    link = teacher.locator(f"{MAIN} [data-testid='stCode']").filter(has_text="class=").first.inner_text()
    return teacher, link


def answer_number(student, value: int) -> None:
    box = student.locator(f"{MAIN} [data-testid='stForm'] input[type='number']")
    box.wait_for(timeout=60_000)
    box.fill(str(value))
    student.get_by_role("button", name="Send my answer").click()
    see(student, f"Your answer: {value}")


def test_a_class_follows_an_uploaded_transformer_lesson_and_a_reload_keeps_code_and_verdict(browser, server):
    lesson = shipped_lesson(TRANSFORMER)
    mask = lesson.steps[1]
    assert mask.challenge is not None and SOFTMAX in mask.challenge.start
    teacher, link = start_class_with(browser, server, lesson_files() / f"{TRANSFORMER}.toml")
    students = [join_by_link(browser, link, viewport=(1280, 900))[0] for _ in range(2)]
    try:
        # Step 2's question: each student reads the uploaded lesson's step, and answers.
        teacher.goto(f"{server}/lesson?step=2")  # the tab keeps its teacher key
        wait_for_run(teacher)
        teacher.get_by_role("heading", name=f"2. {mask.title}").wait_for(timeout=60_000)
        for student in students:
            student.get_by_role("heading", name=f"2. {mask.title}").wait_for(timeout=60_000)
        teacher.get_by_role("button", name="Open answers").click()
        see(teacher, "connected have answered")
        # torch's own walk: the mask's nodes, one MaskedFill per head.
        gained = (len(grad_fns(here(mask.challenge.answer).predictions))
                  - len(grad_fns(here(mask.challenge.start).predictions)))
        for student, guess in zip(students, (gained, gained + 1), strict=True):
            answer_number(student, guess)
        see(teacher, re.compile(r"2\D+of\D+2\D+connected have answered"))
        teacher.get_by_role("button", name="Reveal now").click()
        for student in students:
            expect(student.locator(MAIN).get_by_test_id("stMetricValue").filter(
                has_text=f"+{gained}")).to_have_count(1, timeout=90_000)
        see(students[0], "Right!")
        students[0].screenshot(path=str(SHOTS / "class-lesson-revealed-student.png"))

        # Step 2's challenge: the editors unlock on its starting code.
        teacher.get_by_role("button", name=f"Ask the class: {mask.challenge.title}").click()
        see(teacher, "No run yet")
        for student in students:
            see(student, "The teacher's challenge 1")
            expect(student.locator(".ce-run")).to_be_enabled(timeout=60_000)
            wait_for_text(student, mask.challenge.start)
            # The question revealed stays on the Lesson page: the editor is on screen.
            expect(student.locator(f"{MAIN} [class*='st-key-class_question_']")).to_have_count(0)
            expect(student.locator(".ce-run")).to_be_in_viewport()
        inline, own_line = students
        retype_line(inline, SOFTMAX, INLINE)
        retype_line(own_line, SOFTMAX, LATER)
        own_line.keyboard.press("Enter")
        own_line.keyboard.type(OWN_LINE)
        for student in students:
            run_with_keys(student)
        for student in students:
            see(student, "Your last run passes the check.", timeout=90_000)
        expect(teacher.locator(f"{MAIN} [class*='st-key-class_tile_']")).to_have_count(1, timeout=60_000)
        expect(teacher.locator(f"{MAIN} [class*='st-key-class_tile_']").first).to_contain_text("2 · passes")
        see(teacher, re.compile(r"2\s*ran"))
        gallery = teacher.locator(f"{MAIN} .st-key-class_gallery")
        gallery.scroll_into_view_if_needed()
        teacher.screenshot(path=str(SHOTS / "class-lesson-gallery.png"))

        # One student types more, and reloads before running it.
        ran = text_in_editor(own_line)
        own_line.keyboard.press("End")
        own_line.keyboard.type(UNSENT)
        typed = text_in_editor(own_line)
        assert typed != ran and OWN_LINE in typed
        own_line.wait_for_function("() => sessionStorage.getItem('sd-code-draft') !== null")
        own_line.reload()
        wait_for_run(own_line)
        see(own_line, "The teacher's challenge 1")
        see(own_line, "Your last run passes the check.")
        wait_for_text(own_line, typed)
        own_line.screenshot(path=str(SHOTS / "class-lesson-student-reloaded.png"))
        expect(teacher.locator(f"{MAIN} [class*='st-key-class_tile_']").first).to_contain_text("2 · passes")
    finally:
        for page in (teacher, *students):
            page.context.close()
