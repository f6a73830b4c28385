"""A class writes code (#43), in Chromium: a teacher and three students, four contexts, one class.

The teacher asks the ``.detach()`` challenge on the Your code page; two students solve it
on different lines, one changes something else; the teacher's gallery shows two tiles,
"2 · passes" and "1 · fails"; the teacher shows the failing one and every student sees
its code, and its graph beside their own (compare mode), without a name; the class's CSV
has a row per student. Screenshots of the gallery at 1440x900 and at 1280x720 presenting.
No fixed sleeps: every wait is for a condition.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from playwright.sync_api import expect

from stockdemo.classroom.challenges import CHALLENGES
from stockdemo.edits import EDITS, apply
from tests.browser.class_drive import MAIN, go, join_by_link, see, start_class
from tests.browser.drive import SHOTS, wait_for_run
from tests.browser.test_code_browser import (
    VIEW,
    pick,
    retype_line,
    run_with_keys,
    text_in_editor,
    wait_for_text,
)

pytestmark = pytest.mark.browser

STEP = "h = self.cell(x[:, t], h)"
# Three students: detach in the cell's call; detach on a line of its own; something else.
SOLVED_INLINE = "h = self.cell(x[:, t], h.detach())"
OTHER = "h = self.cell(x[:, t], h) * 2  # <b>not</b> a detach"


def tile(teacher, verdict: str):
    return teacher.locator(f"{MAIN} [class*='st-key-class_tile_']").filter(has_text=verdict)


def test_a_teacher_asks_detach_sees_two_groups_and_shows_the_failing_one_to_the_class(browser, server):
    teacher, _, link = start_class(browser, server, viewport=(1440, 900))
    students = [join_by_link(browser, link)[0] for _ in range(3)]
    pages = (teacher, *students)
    try:
        go(teacher, "code")
        loop = pick(teacher, "loop")  # the teacher's code: the loop written out, nothing cut yet
        for student in students:
            wait_for_text(student, loop)
            expect(student.locator(".ce-run")).to_be_disabled()  # following: locked

        teacher.locator(MAIN).get_by_text("Ask the class a challenge").click()
        teacher.locator(f"{MAIN} .st-key-class_ask_choice").get_by_role(
            "radio", name=EDITS["detach"].title, exact=True).click()
        expect(teacher.locator(MAIN).get_by_text(CHALLENGES["detach"].prompt)).to_be_visible()
        teacher.get_by_role("button", name="Ask the class").click()
        see(teacher, "No run yet")

        for student in students:
            see(student, "The teacher's challenge 1")
            expect(student.locator(".ce-run")).to_be_enabled(timeout=60_000)  # the editor is theirs
            assert text_in_editor(student) == loop  # starting from the teacher's code

        inline, own_line, other = students
        retype_line(inline, STEP, SOLVED_INLINE)
        retype_line(own_line, STEP, "h = h.detach()")
        own_line.keyboard.press("Enter")
        own_line.keyboard.type(STEP)
        retype_line(other, STEP, OTHER)
        assert text_in_editor(own_line).count("\n") == loop.count("\n") + 1  # on a line of its own
        for student in students:
            run_with_keys(student)
        for student, words in ((inline, "passes the check"), (own_line, "passes the check"),
                               (other, "does not pass yet")):
            see(student, words, timeout=90_000)

        expect(tile(teacher, "2 · passes")).to_have_count(1, timeout=60_000)
        expect(tile(teacher, "1 · fails")).to_have_count(1)
        expect(teacher.locator(f"{MAIN} [class*='st-key-class_tile_']")).to_have_count(2)
        see(teacher, re.compile(r"3\s*ran"))
        SHOTS.mkdir(parents=True, exist_ok=True)
        gallery = teacher.locator(f"{MAIN} .st-key-class_gallery")
        gallery.scroll_into_view_if_needed()
        teacher.screenshot(path=str(SHOTS / "class-challenge-gallery-1440x900.png"))
        assert "seat" in gallery.inner_text()  # seat numbers, outside presenter mode

        tile(teacher, "1 · fails").get_by_role("button", name="Show the class").click()
        for student in (*students, teacher):
            shown = student.locator(f"{MAIN} .st-key-class_shown") if student is not teacher else None
            if shown is not None:
                expect(shown).to_contain_text("Shown to the class", timeout=60_000)
                expect(shown).to_contain_text(OTHER)  # the code as text: the tags are there, unrendered
                assert "seat" not in shown.inner_text().lower()  # without a name
                assert not shown.locator("b").count()
            expect(student.locator(VIEW)).to_have_attribute("data-compare", "1", timeout=60_000)
        assert text_in_editor(inline).count(".detach()") == 1  # each keeps their own code beside it

        # Presenting on a 1280x720 projector: the gallery whole on screen, no seat numbers.
        teacher.set_viewport_size({"width": 1280, "height": 720})
        teacher.goto(teacher.url + ("&" if "?" in teacher.url else "?") + "present=1")
        wait_for_run(teacher)
        gallery = teacher.locator(f"{MAIN} .st-key-class_gallery")
        expect(gallery).to_contain_text("2 · passes", timeout=60_000)
        gallery.scroll_into_view_if_needed()
        teacher.screenshot(path=str(SHOTS / "class-challenge-gallery-1280x720-presenting.png"))
        assert "seat" not in gallery.inner_text()

        go(teacher, "classroom")
        teacher.locator(f"{MAIN} [data-testid='stDownloadButton']").wait_for(timeout=30_000)
        with teacher.expect_download() as download:
            teacher.get_by_role("button", name="Download every answer (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
        assert len(rows) == 3
        assert sorted(r["correct"] for r in rows) == ["no", "yes", "yes"]
        assert all(r["question"] == "challenge 1" and r["runs"] == "1" for r in rows)
        assert any(OTHER in r["answer"] for r in rows)
        assert apply(EDITS["loop"]) == loop
    finally:
        for page in pages:
            page.context.close()
