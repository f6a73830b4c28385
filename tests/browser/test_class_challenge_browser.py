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

from harness.axe import TAGS, axe_source, frame_css_applied
from harness.class_drive import MAIN, go, in_full_view, join_by_link, on_screen, see, start_class
from harness.drive import SHOTS, VIEW, wait_for_run
from harness.editor import pick, retype_line, run_with_keys, text_in_editor, wait_for_text
from harness.helpers import running_server
from harness.redis_server import RedisServer
from stockdemo.classroom import Failure, new_seat, open_classroom
from stockdemo.classroom.challenges import CHALLENGES, shape_key
from stockdemo.code.edits import EDITS, apply
from stockdemo.sandbox import run_code

pytestmark = pytest.mark.browser

STEP = "h = self.cell(x[:, t], h)"
# Three students: detach in the cell's call; detach on a line of its own; something else.
SOLVED_INLINE = "h = self.cell(x[:, t], h.detach())"
OTHER = "h = self.cell(x[:, t], h) * 2  # <b>not</b> a detach"


GALLERY_PARTS = [".st-key-class_gallery"]
STUDENT_PARTS = [".st-key-class_challenge", ".st-key-class_shown", "[data-testid='graph-view']"]


def serious_violations_in(page, parts: list[str]) -> list[str]:
    """axe-core's serious or critical violations inside these parts of the page, one line each."""
    frame_css_applied(page)
    if not page.evaluate("() => typeof axe === 'object'"):
        page.add_script_tag(content=axe_source())
    violations = page.evaluate(
        "async ([parts, tags]) => (await axe.run({include: parts.map(p => [p])},"
        " {runOnly: {type: 'tag', values: tags}})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))}))",
        [parts, TAGS])
    return [f"{v['id']} ({v['impact']}): {v['nodes'][:3]}" for v in violations
            if v["impact"] in ("serious", "critical")]


def within_reach(student, rows_px: int = 120) -> bool:
    """The Run button, and the top ``rows_px`` of the editor and of the graph view, are on
    screen without scrolling."""
    height = student.viewport_size["height"]
    run = student.locator(".ce-run").bounding_box()
    parts = [student.locator(".cm-editor").first,
             student.locator(VIEW)]
    boxes = [p.bounding_box() for p in parts]
    return (run is not None and run["y"] + run["height"] <= height
            and all(b is not None and b["y"] + rows_px <= height for b in boxes))


def tile(teacher, verdict: str):
    return teacher.locator(f"{MAIN} [class*='st-key-class_tile_']").filter(has_text=verdict)


def test_a_teacher_asks_detach_sees_two_groups_and_shows_the_failing_one_to_the_class(browser, server):
    teacher, _, link = start_class(browser, server, viewport=(1440, 900))
    # The first student on a small laptop's 1280x720: the challenge must leave their editor
    # and graph on screen.
    SHOTS.mkdir(parents=True, exist_ok=True)
    students = [join_by_link(browser, link, viewport=(1280, 720) if i == 0 else (1280, 900))[0]
                for i in range(3)]
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
        expect(inline.locator(VIEW)).to_have_attribute("data-moving", "0")
        inline.screenshot(path=str(SHOTS / "class-challenge-student-1280x720.png"))
        assert within_reach(inline), "the challenge pushed the editor or the graph below the fold"

        expect(tile(teacher, "2 · passes")).to_have_count(1, timeout=60_000)
        expect(tile(teacher, "1 · fails")).to_have_count(1)
        expect(teacher.locator(f"{MAIN} [class*='st-key-class_tile_']")).to_have_count(2)
        see(teacher, re.compile(r"3\s*ran"))
        SHOTS.mkdir(parents=True, exist_ok=True)
        gallery = teacher.locator(f"{MAIN} .st-key-class_gallery")
        gallery.scroll_into_view_if_needed()
        teacher.screenshot(path=str(SHOTS / "class-challenge-gallery-1440x900.png"))
        assert "seat" in gallery.inner_text()  # seat numbers, outside presenter mode

        # A tile's verdict puts its run beside the teacher's, what differs ringed: theirs alone.
        expect(teacher.locator(VIEW)).to_have_attribute("data-compare", "0")
        tile(teacher, "1 · fails").get_by_role("button", name="1 · fails").click()
        expect(teacher.locator(VIEW)).to_have_attribute("data-compare", "1", timeout=60_000)
        expect(teacher.locator(VIEW)).to_have_attribute("data-moving", "0")
        teacher.screenshot(path=str(SHOTS / "class-challenge-teacher-looks.png"))
        for student in students:
            expect(student.locator(VIEW)).to_have_attribute("data-compare", "0")
        tile(teacher, "1 · fails").get_by_role("button", name="Show", exact=True).click()
        for student in (*students, teacher):
            shown = student.locator(f"{MAIN} .st-key-class_shown") if student is not teacher else None
            if shown is not None:
                expect(shown).to_contain_text("Shown to the class", timeout=60_000)
                expect(shown).to_contain_text(OTHER)  # the code as text: the tags are there, unrendered
                assert "seat" not in shown.inner_text().lower()  # without a name
                assert not shown.locator("b").count()
            expect(student.locator(VIEW)).to_have_attribute("data-compare", "1", timeout=60_000)
        assert text_in_editor(inline).count(".detach()") == 1  # each keeps their own code beside it
        expect(inline.locator(VIEW)).to_have_attribute("data-moving", "0")
        inline.screenshot(path=str(SHOTS / "class-challenge-student-shown.png"))
        assert within_reach(inline), "the shown run pushed the editor or the graph below the fold"

        # axe: the teacher's gallery and a student's challenge view, at a phone's, a laptop's
        # and a large screen's width.
        for width in (1920, 1280, 390):
            for page, parts in ((teacher, GALLERY_PARTS), (inline, STUDENT_PARTS), (other, STUDENT_PARTS)):
                page.set_viewport_size({"width": width, "height": 900})
                found = serious_violations_in(page, parts)
                assert found == [], f"{width} px:\n" + "\n".join(found)

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


def test_sixty_students_fit_the_teachers_gallery_on_a_1280x720_projector(browser, tmp_path, monkeypatch):
    """Sixty runs in eight graphs, and errors, through Redis (as under make serve): the
    gallery, presenting, is on screen whole, without a seat number."""
    redis_server = RedisServer(tmp_path).start()
    monkeypatch.setenv("STOCKDEMO_REDIS_URL", redis_server.url)
    try:
        with running_server() as server:
            teacher, code, _ = start_class(browser, server, viewport=(1280, 720), query="?present=1")
            try:
                teacher.goto(f"{server}/code?present=1")  # the sidebar closed, as on a projector
                wait_for_run(teacher)
                teacher.locator(MAIN).get_by_text("Ask the class a challenge").click()
                teacher.locator(f"{MAIN} .st-key-class_ask_choice").get_by_role(
                    "radio", name=EDITS["detach"].title, exact=True).click()
                teacher.get_by_role("button", name="Ask the class").click()
                see(teacher, "No run yet")
                room = open_classroom(redis_server.url)
                check = CHALLENGES["detach"].check
                loop = apply(EDITS["loop"])  # eight graphs: detached, or not cut at one of 7 lengths
                programs = [apply(EDITS["detach"]),
                            *(loop.replace("torch.randn(10, 5, 3)", f"torch.randn(10, {t}, 3)")
                              for t in range(2, 9))]
                for i in range(60):
                    seat = new_seat()
                    room.join(code, seat)
                    if i % 10 == 9:  # six errors, two messages, one with markup in it
                        room.submit(code, seat, "boom", False, check.sentence, "none",
                                    Failure("error", "RuntimeError", "<b>shape</b> mismatch", None, 14)
                                    if i % 20 == 9 else
                                    Failure("error", "NameError", "name 'hh' is not defined", None, 15))
                        continue
                    source = programs[i % len(programs)]
                    run = run_code(source)
                    verdict = check.verdict(source, run_code, first=run)
                    room.submit(code, seat, source, verdict.passes, verdict.sentence,
                                shape_key(run.graph), None)
                gallery = teacher.locator(f"{MAIN} .st-key-class_gallery")
                expect(gallery).to_contain_text("60 ran", timeout=60_000)
                tiles = teacher.locator(f"{MAIN} [class*='st-key-class_tile_']")
                expect(tiles).to_have_count(8, timeout=60_000)
                expect(gallery).to_contain_text("<b>shape</b> mismatch")  # as text
                # Scrolled as a teacher would, to its end: whole, and clear of the header bar.
                gallery.evaluate("e => e.scrollIntoView({block: 'end'})")
                SHOTS.mkdir(parents=True, exist_ok=True)
                teacher.screenshot(path=str(SHOTS / "class-challenge-gallery-60-1280x720-presenting.png"))
                assert in_full_view(teacher, gallery), gallery.bounding_box()
                assert "seat" not in gallery.inner_text()
                assert not gallery.locator("b").filter(has_text="shape").count()
            finally:
                teacher.context.close()
    finally:
        redis_server.stop()


def test_the_lessons_your_turn_step_asks_the_class_and_the_students_editors_unlock(browser, server):
    """The Lesson's step 9 on a 1280x720 projector: the question, then "Ask the class:
    .detach()" on screen; pressed, the teacher is on Your code with the gallery waiting and
    a following student's editor is theirs, on the loop, with the challenge above it."""
    from stockdemo.lesson import STEPS

    number, step = next((i, s) for i, s in enumerate(STEPS, start=1) if s.challenge is not None)
    teacher, _, link = start_class(browser, server, viewport=(1280, 720), query="?present=1")
    student = join_by_link(browser, link, viewport=(1280, 720))[0]
    try:
        teacher.goto(f"{server}/lesson?step={number}&present=1")  # the tab keeps its teacher key
        wait_for_run(teacher)
        ask = teacher.get_by_role("button", name=f"Ask the class: {step.challenge.title}")
        expect(ask).to_be_visible(timeout=60_000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        teacher.screenshot(path=str(SHOTS / "lesson-your-turn-teacher-1280x720-presenting.png"))
        assert on_screen(teacher, ask)
        see(student, f"{number}. {STEPS[number - 1].title}")  # the class follows the step
        ask.click()
        see(teacher, "No run yet")  # on Your code, the gallery open
        see(student, "The teacher's challenge 1")
        expect(student.locator(".ce-run")).to_be_enabled(timeout=60_000)
        assert text_in_editor(student) == step.challenge.start
        expect(student.locator(f"{MAIN} .st-key-code_edit")).to_have_count(0)  # the answer is theirs
        assert within_reach(student)
    finally:
        teacher.context.close()
        student.context.close()
