"""Class mode through AppTest: a teacher's tab and students' tabs in one process share the class."""

from __future__ import annotations

import json
import re
import time

import pytest
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT, metrics, move_stage, stage_values
from harness.redis_server import RedisServer
from stockdemo.classroom import UNAVAILABLE, Teacher
from stockdemo.config import show_class_code
from stockdemo.lesson import STEPS
from stockdemo.ui.classmode import bar as class_bar
from stockdemo.ui.classmode import session as class_session

CLASS_PAGE = str(ROOT / "pages" / "classroom.py")
PLAYGROUND = str(ROOT / "pages" / "playground.py")
LESSON = str(ROOT / "pages" / "lesson.py")


@pytest.fixture(autouse=True)
def memory_class(monkeypatch):
    """Each test starts with an empty in-memory class store (one process: `make run`)."""
    monkeypatch.delenv("STOCKDEMO_REDIS_URL", raising=False)
    class_session.class_room.clear()
    yield
    class_session.class_room.clear()


def app(path: str, **query: str) -> AppTest:
    at = AppTest.from_file(path, default_timeout=120)
    for name, value in query.items():
        at.query_params[name] = value
    return at


def start_class() -> tuple[AppTest, Teacher]:
    at = app(CLASS_PAGE).run()
    at.button(key="class_start").click().run()
    assert not at.exception
    return at, at.session_state["class_teacher"]


def playground_works(at: AppTest) -> bool:
    """The Playground ran its model: its graph-size figure is on the page."""
    return not at.exception and "Graph nodes" in metrics(at)


def texts(at: AppTest) -> str:
    return " ".join(e.value for kind in ("markdown", "caption", "warning", "info", "success")
                    for e in getattr(at, kind))


def teachers_playground(teacher, seq_len: int):
    """The teacher's own Playground, T moved to ``seq_len``: the move the class follows."""
    desk = app(PLAYGROUND)
    desk.session_state["class_teacher"] = teacher
    desk.run()
    move_stage(desk, seq_len=seq_len)
    return desk


def test_the_teacher_gets_a_code_a_join_link_without_the_key_and_a_qr_code():
    at, teacher = start_class()
    assert show_class_code(teacher.code) in texts(at)
    link = next(c.value for c in at.code if f"class={teacher.code}" in c.value)
    assert teacher.key not in link and "key" not in link
    assert link.startswith("/playground?")
    assert at.get("image")  # the QR code, drawn offline from the link
    assert "0** connected · **0** following" in texts(at)


def test_a_student_following_the_link_takes_every_move_of_the_teacher():
    _, teacher = start_class()
    desk = teachers_playground(teacher, seq_len=8)
    move_stage(desk, cell="gru")
    assert not desk.exception
    student = app(PLAYGROUND, **{"class": teacher.code.lower()}).run()
    assert not student.exception
    assert stage_values(student)["seq_len"] == 8
    assert stage_values(student)["cell"] == "gru"
    assert "following the teacher" in texts(student)
    seat = student.session_state["class_seat"]
    assert student.query_params["seat"] == seat  # a reconnect keeps the same seat
    move_stage(desk, num_layers=3)
    student.run()
    assert stage_values(student)["num_layers"] == 3
    counts = app(CLASS_PAGE)
    counts.session_state["class_teacher"] = teacher
    counts.run()
    assert "1** connected · **1** following" in texts(counts)


def test_a_student_breaks_away_explores_and_follows_again():
    _, teacher = start_class()
    desk = teachers_playground(teacher, seq_len=8)
    student = app(PLAYGROUND, **{"class": teacher.code}).run()
    student.button(key="class_break_away").click().run()
    move_stage(student, seq_len=30)
    move_stage(desk, seq_len=9)
    student.run()
    assert stage_values(student)["seq_len"] == 30  # exploring: the teacher's move waits
    assert "exploring on your own" in texts(student)
    student.button(key="class_follow").click().run()
    assert stage_values(student)["seq_len"] == 9


def test_a_following_students_controls_hold_the_teachers_settings():
    _, teacher = start_class()
    teachers_playground(teacher, seq_len=8)
    student = app(PLAYGROUND, **{"class": teacher.code}).run()
    # what a browser sends when it polls before it has drawn the teacher's move
    move_stage(student, seq_len=5)
    assert stage_values(student)["seq_len"] == 8
    assert student.session_state["class_following"]


def test_the_lesson_step_follows_the_teacher():
    _, teacher = start_class()
    desk = app(LESSON, step="4")
    desk.session_state["class_teacher"] = teacher
    desk.run()
    assert not desk.exception
    student = app(LESSON, **{"class": teacher.code}).run()
    assert not student.exception
    assert student.header[0].value.startswith("4. ")
    assert student.query_params["step"] == "4"


def test_a_followers_whole_run_from_its_older_address_shows_the_teachers_new_step():
    """A tab that has taken the teacher's step runs whole from the address its browser still
    holds (its first run after a reconnect, which can come after the push's run that took it):
    the page shows the teacher's step, and the address follows."""
    _, teacher = start_class()
    desk = app(LESSON, step="4")
    desk.session_state["class_teacher"] = teacher
    desk.run()
    student = app(LESSON, **{"class": teacher.code}).run()
    assert student.header[0].value.startswith("4. ")
    desk.query_params["step"] = "5"
    desk.run()
    student.run()  # the push's run: takes step 5
    assert student.header[0].value.startswith("5. ")
    student.query_params["step"] = "4"  # the browser's own run, with the address it had
    student.run()
    assert not student.exception
    assert student.header[0].value.startswith("5. ") and student.query_params["step"] == "5"


def _bar_takes_step_5(sent_step: str, drawn_ago: float = 60.0) -> str:
    """A follower whose whole run drew the teacher's step 5 ``drawn_ago`` seconds ago runs its
    class bar's part alone, with ``sent_step`` in the address its browser sent -> what ``take``
    said."""
    def page() -> None:
        import time

        import streamlit as st

        from stockdemo.classroom import ClassState
        from stockdemo.ui import steps
        from stockdemo.ui.classmode import follow
        from stockdemo.ui.classmode.keys import APPLIED, DRAWN_PAGE, DRAWN_PAGE_AT

        params = {"step": "5"}
        st.session_state[APPLIED] = (7, "pages/lesson.py", params)
        st.session_state[DRAWN_PAGE] = ("pages/lesson.py", params)
        st.session_state[DRAWN_PAGE_AT] = time.monotonic() - float(st.query_params["ago"])
        steps.keep_step(5)
        state = ClassState(code="K7QM3XPA", version=7, page="pages/lesson.py", params=params, step=5,
                           question=None, revealed=False)
        st.markdown(f"rerun: {follow.take(state, 'pages/lesson.py', full_run=False)}")

    at = AppTest.from_function(page)
    at.query_params["step"] = sent_step
    at.query_params["ago"] = str(drawn_ago)
    at.run()
    assert not at.exception
    return at.markdown[0].value


def test_a_followers_bar_asks_for_the_whole_page_while_its_browsers_address_is_behind_the_teacher():
    """The whole run that took step 5 never reached the browser (a run superseded by another
    loses its last messages): its next bar run still comes with step 4 and reruns the page.
    Not while that run may still be on its way to a busy server's browser."""
    assert _bar_takes_step_5("4") == "rerun: True"
    assert _bar_takes_step_5("5") == "rerun: False"
    assert _bar_takes_step_5("4", drawn_ago=1.0) == "rerun: False"


def open_question(step: int = 3, countdown: int = 0) -> tuple[AppTest, Teacher]:
    """The teacher's Class page with a lesson step's question open."""
    desk, teacher = start_class()
    desk.selectbox(key="class_question_step").select(step).run()
    if countdown:
        desk.get_by_key(f"class_countdown_{step}").set_value(countdown)
    desk.button(key="class_open").click().run()
    assert not desk.exception
    return desk, teacher


def send(student: AppTest, value: int, step: int = 3) -> None:
    student.number_input(key=f"class_number_{step}").set_value(value)
    next(b for b in student.button if b.label == "Send my answer").click().run()
    assert not student.exception


def test_a_student_answers_before_the_reveal_then_sees_the_live_answer_beside_the_guess():
    desk, teacher = open_question()
    student = app(CLASS_PAGE, **{"class": teacher.code}).run()
    assert STEPS[2].question in texts(student)
    send(student, 4)
    assert "Your answer: **4**" in texts(student)
    desk.run()
    assert "**1** of **1** connected have answered" in texts(desk)
    assert not desk.get("plotly_chart")  # results stay hidden until the reveal (the projector)
    desk.button(key="class_reveal").click().run()
    assert not desk.exception
    live = STEPS[2].reveal()
    figure = json.loads(desk.get("plotly_chart")[0].proto.spec)
    assert list(figure["data"][0]["x"]) == ["4"]
    shown = metrics(desk)
    assert shown["Answers"] == "1" and shown[live.label] == live.value
    assert shown["Right"] == ("100%" if live.value.lstrip("+") == "4" else "0%")
    assert shown["Median time to answer"].endswith(" s")
    student.run()
    assert {m.label: m.value for m in student.metric} == {"Your guess": "4", live.label: live.value}
    assert "Right!" in texts(student) or live.value.lstrip("+") != "4"


def test_the_countdown_locks_the_answer_box_and_reveal_now_still_works(monkeypatch):
    desk, teacher = open_question(countdown=15)
    student = app(CLASS_PAGE, **{"class": teacher.code}).run()
    countdown = [h.proto.body for h in student.get("html") if "sd-countdown" in h.proto.body]
    assert countdown and "data-seconds-left='15'" in countdown[0]
    monkeypatch.setattr(time, "time", lambda: 2e10)  # long after the countdown
    student.run()
    assert "Time is up: answers are locked" in texts(student)
    assert not any(b.label == "Send my answer" for b in student.button)
    desk.run()
    assert "Time is up" in texts(desk)
    desk.button(key="class_reveal").click().run()
    assert not desk.exception and STEPS[2].reveal().value in metrics(desk).values()


def test_a_second_answer_from_the_same_tab_is_not_counted():
    desk, teacher = start_class()
    desk.selectbox(key="class_question_step").select(3).run()
    desk.button(key="class_open").click().run()
    student = app(CLASS_PAGE, **{"class": teacher.code}).run()
    student.number_input(key="class_number_3").set_value(4)
    next(b for b in student.button if b.label == "Send my answer").click().run()
    # a reload of the same tab (same seat in the address) finds the answer already given
    again = app(CLASS_PAGE, **{"class": teacher.code,
                               "seat": student.session_state["class_seat"]}).run()
    assert "Your answer: **4**" in texts(again)
    assert not any(b.label == "Send my answer" for b in again.button)


def join(page: AppTest, typed: str) -> str:
    """Type a code into the Class page's join box and press Join -> what the page says."""
    page.text_input(key="class_join_code").set_value(typed)
    next(b for b in page.button if b.label == "Join the class").click().run()
    assert not page.exception
    return " ".join(w.value for w in page.warning)


def test_each_codes_message_appears_on_its_own_try():
    start_class()
    student = app(CLASS_PAGE).run()
    assert "No class has the code ABCD-EFGJ" in join(student, "ABCD-EFGJ")
    assert "'<b>x</b>' is not one" in join(student, "<b>x</b>")
    assert "No class has the code HJKM-NPQR" in join(student, "hjkm npqr")


def test_malformed_codes_use_up_no_tries_and_wrong_ones_still_do():
    _, teacher = start_class()
    student = app(CLASS_PAGE).run()
    for typo in ("nonsense", "ABC", "K7QM-3XPA-0", "O0O0O0O0", "ZZZZ-ZZZ", "!!"):
        assert "is not one" in join(student, typo) or "too long" in join(student, typo)
    assert join(student, show_class_code(teacher.code)) == ""  # joined: 6 typos cost nothing
    assert "following the teacher" in texts(student) or student.session_state["class_code"]
    guesser = app(CLASS_PAGE).run()
    for n in range(5):
        join(guesser, f"ZZZZ-ZZZ{'23456'[n]}")
    assert "Too many wrong codes" in join(guesser, show_class_code(teacher.code))


def test_a_student_cannot_become_the_teacher_with_a_wrong_key():
    _, teacher = start_class()
    intruder = app(CLASS_PAGE).run()
    intruder.text_input(key="class_resume_code").set_value(teacher.code)
    intruder.text_input(key="class_resume_key").set_value("guess")
    next(b for b in intruder.button if b.label == "Teach this class").click().run()
    assert "Only the teacher" in texts(intruder)
    assert "class_teacher" not in intruder.session_state


def test_ending_the_class_sends_every_student_back_to_working_alone():
    desk, teacher = start_class()
    student = app(PLAYGROUND, **{"class": teacher.code}).run()
    desk.button(key="class_end").click().run()
    student.run()
    assert "The class has ended" in texts(student)
    assert "class" not in student.query_params
    assert playground_works(student)


def test_with_redis_down_every_page_says_so_once_and_works_alone(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_REDIS_URL", "redis://127.0.0.1:1/0")  # nobody answers
    class_session.class_room.clear()
    page = app(CLASS_PAGE).run()
    page.button(key="class_start").click().run()
    assert not page.exception and UNAVAILABLE in texts(page)
    student = app(PLAYGROUND, **{"class": "K7QM3XPA"}).run()
    assert not student.exception
    assert [w.value for w in student.warning] == [UNAVAILABLE]
    assert playground_works(student)


def test_redis_stopped_mid_class_then_restarted_the_student_follows_again(tmp_path, monkeypatch):
    server = RedisServer(tmp_path).start()
    try:
        monkeypatch.setenv("STOCKDEMO_REDIS_URL", server.url)
        class_session.class_room.clear()
        _, teacher = start_class()
        student = app(PLAYGROUND, **{"class": teacher.code}).run()
        assert "following the teacher" in texts(student)
        server.stop()
        assert stage_values(student)  # the page still has its controls
        student.run()
        assert not student.exception and UNAVAILABLE in texts(student)
        assert playground_works(student)
        server.start()
        teachers_playground(teacher, seq_len=7)
        student.run()
        assert UNAVAILABLE not in texts(student)
        assert stage_values(student)["seq_len"] == 7
    finally:
        server.stop()


def lesson_student(teacher: Teacher, step: int) -> AppTest:
    return app(LESSON, **{"class": teacher.code, "step": str(step)}).run()


def test_on_the_lesson_a_student_gets_no_reveal_and_no_answer_before_the_teacher_reveals():
    desk, teacher = open_question()
    guide = app(LESSON, step="3")
    guide.session_state["class_teacher"] = teacher
    guide.run()
    student = lesson_student(teacher, 3)
    assert not student.exception and student.header[0].value.startswith("3. ")
    live = STEPS[2].reveal()
    assert not [b for b in student.button if "Reveal" in b.label]
    assert not student.metric and live.detail not in texts(student)
    assert texts(student).count(STEPS[2].question) == 1  # the question shows once
    assert STEPS[2].link_label not in texts(student)  # the experiment computes the answer
    send(student, 4)
    desk.button(key="class_reveal").click().run()
    student.run()
    assert {m.label: m.value for m in student.metric} == {"Your guess": "4", live.label: live.value}
    assert live.detail in texts(student)


def test_the_lessons_first_sentence_names_buttons_each_tab_in_a_class_has():
    """Outside a class the Lesson's intro says Reveal the answer; in one that button is nobody's:
    the teacher opens the answers and reveals, a student sends a guess. Each intro names only
    buttons its own tab gets, in the order it gets them."""
    def intro(at: AppTest) -> str:
        return at.markdown[0].value

    def bold(text: str) -> list[str]:
        return re.findall(r"\*\*(.+?)\*\*", text)

    def labels(at: AppTest) -> set[str]:
        return {b.label for b in at.button}

    alone = app(LESSON, step="3").run()
    assert bold(intro(alone)) == ["Reveal the answer"] and "Reveal the answer" in labels(alone)

    desk, teacher = start_class()
    guide = app(LESSON, step="3")
    guide.session_state["class_teacher"] = teacher
    guide.run()
    assert bold(intro(guide)) == ["Open answers", "Reveal now"]
    assert "Reveal the answer" not in labels(guide) and "Open answers" in labels(guide)
    guide.button(key="class_open").click().run()
    assert "Reveal now" in labels(guide)

    student = lesson_student(teacher, 3)
    assert bold(intro(student)) == ["Send my answer"]
    assert "Send my answer" in labels(student) and not [b for b in labels(student) if "Reveal" in b]


def test_a_student_in_a_class_cannot_reveal_a_step_the_teacher_has_not():
    _, teacher = start_class()
    student = app(LESSON, **{"class": teacher.code, "step": "5"})
    student.session_state["lesson_revealed"] = {5}  # revealed alone, before joining
    student.run()
    assert not student.metric and not [b for b in student.button if "Reveal" in b.label]
    assert "The teacher opens this question" in texts(student)


def test_a_following_students_next_and_back_are_held_with_the_hint():
    _, teacher = start_class()
    desk = app(LESSON, step="4")
    desk.session_state["class_teacher"] = teacher
    desk.run()
    student = lesson_student(teacher, 4)
    buttons = {b.key: b for b in student.button}
    assert buttons["lesson_next"].disabled and buttons["lesson_back"].disabled
    assert buttons["lesson_next"].help == class_session.HINT
    student.button(key="class_break_away").click().run()
    assert not student.button(key="lesson_next").disabled  # exploring: the lesson is theirs


def test_a_following_student_who_moves_a_slider_gets_the_hint_and_the_teachers_value():
    _, teacher = start_class()
    desk = app(str(ROOT / "pages" / "debugging.py"), seq_len="12")
    desk.session_state["class_teacher"] = teacher
    desk.run()
    assert not desk.exception
    student = app(str(ROOT / "pages" / "debugging.py"), **{"class": teacher.code}).run()
    assert student.slider(key="seq_len").value == 12
    student.session_state["class_applied_at"] = 0.0  # the move comes well after the last take
    student.slider(key="seq_len").set_value(30).run()
    assert student.slider(key="seq_len").value == 12
    assert [t.value for t in student.toast] == [class_session.HINT]


def test_the_class_page_keeps_a_summary_per_question():
    desk, teacher = open_question()
    student = app(CLASS_PAGE, **{"class": teacher.code}).run()
    send(student, 4)
    desk.button(key="class_reveal").click().run()
    desk.run()
    summary = desk.dataframe[0].value
    assert list(summary["Question"]) == [3] and list(summary["Answers"]) == [1]
    assert list(summary["Live answer"]) == [STEPS[2].reveal().value]
    assert desk.get("download_button")


def test_an_answer_sent_while_redis_is_down_is_kept_and_counted_when_it_is_back(tmp_path,
                                                                               monkeypatch):
    server = RedisServer(tmp_path).start()
    try:
        monkeypatch.setenv("STOCKDEMO_REDIS_URL", server.url)
        class_session.class_room.clear()
        desk, teacher = open_question()
        student = app(CLASS_PAGE, **{"class": teacher.code}).run()
        student.number_input(key="class_number_3").set_value(4)
        server.stop()
        next(b for b in student.button if b.label == "Send my answer").click().run()
        assert not student.exception and UNAVAILABLE in texts(student)
        student.run()
        assert "Your answer **4** is kept here" in texts(student)
        server.start()
        student.run()
        assert "Your answer: **4**" in texts(student)
        assert class_session.class_room().distribution(teacher, 3) == {"4": 1}
    finally:
        server.stop()


def test_a_student_who_steps_onto_the_open_question_sees_it_once():
    desk, teacher = open_question()
    guide = app(LESSON, step="2")
    guide.session_state["class_teacher"] = teacher
    guide.run()
    student = lesson_student(teacher, 2)
    student.button(key="class_break_away").click().run()
    assert texts(student).count(STEPS[2].question) == 1  # in the bar: the open question
    student.button(key="lesson_next").click().run()
    assert not student.exception
    assert student.header[0].value.startswith("3. ")
    assert texts(student).count(STEPS[2].question) == 1  # now in the lesson, not twice


def test_each_seat_has_its_own_bar_timer_so_a_class_does_not_tick_at_once():
    seats = [f"seat{i:02d}-abcdefghijkl" for i in range(60)]
    periods = [class_bar.bar_period(s) for s in seats]
    assert all(class_bar.POLL_S <= p <= class_bar.POLL_S + class_bar.POLL_SPREAD_S for p in periods)
    assert periods == [class_bar.bar_period(s) for s in seats]  # the same at each run and reload
    # Spread: no second of the 5 holds more than a third of the class.
    per_second = [sum(int(p - class_bar.POLL_S) == k for p in periods) for k in range(5)]
    assert max(per_second) <= 20, per_second
    assert class_bar.bar_period(None) == class_bar.POLL_S


# --------------------------------------------------------------------------- a challenge (#43)

CODE_PAGE = str(ROOT / "pages" / "code.py")
MARKUP = "<b>bold</b> <script>alert(1)</script> **stars** [link](javascript:alert(1)) :red[red]"


def markup_free(at: AppTest) -> bool:
    """No element drawn as markdown holds a student's markup unescaped."""
    return not any(tag in e.value for kind in ("markdown", "caption", "warning", "info", "success")
                   for e in getattr(at, kind) for tag in ("<b>", "<script", "**stars**", "](javascript"))


def test_students_code_prints_and_errors_reach_the_gallery_and_the_class_as_text_never_markup():
    from stockdemo.classroom import Failure, new_seat
    from stockdemo.classroom.challenges import shape_key
    from stockdemo.code.edits import EDITS, apply
    from stockdemo.sandbox import run_code
    from stockdemo.ui.classmode.gallery import plain

    _, teacher = start_class()
    room = class_session.class_room()
    room.ask(teacher, "detach", ".detach()", "Cut the graph", apply(EDITS["loop"]))
    source = apply(EDITS["loop"]).replace("torch.manual_seed(0)",
                                          f"torch.manual_seed(0)  # {MARKUP}\nprint({MARKUP!r})")
    run = run_code(source)
    assert run.ok and MARKUP in run.printed  # a print with markup in it, run for real
    student_seat, other_seat = new_seat(), new_seat()
    for seat in (student_seat, other_seat):
        room.join(teacher.code, seat)
    room.submit(teacher.code, other_seat, source, False, "s", shape_key(run.graph), None)
    room.submit(teacher.code, new_seat(), "x", False, "s", "none",
                Failure("error", "RuntimeError", MARKUP, None, 3))

    desk = app(CODE_PAGE)
    desk.session_state["class_teacher"] = teacher
    desk.run()
    assert not desk.exception
    assert "1 · fails" in [b.label for b in desk.button]
    assert any(f"1: RuntimeError: {MARKUP}" in t.value for t in desk.text)  # the error, as text
    assert markup_free(desk)

    shape = room.gallery(teacher).groups[0].shape
    room.show(teacher, shape)
    student = app(CODE_PAGE, **{"class": teacher.code, "seat": student_seat}).run()
    assert not student.exception
    assert any(source.strip() == c.value.strip() for c in student.code)  # the shown code, whole, as code
    assert markup_free(student)
    # Op names and anything else put into markdown go through plain(): every mark escaped.
    assert "<" not in plain(MARKUP).replace("\\<", "") and "*" not in plain("**x**").replace("\\*", "")


def edits_offered(at: AppTest) -> bool:
    """The Your code page offers its ready-made edits (their pills are drawn)."""
    return any(p.proto.id.endswith("code_edit") for p in at.get("button_group"))


def test_a_challenge_unlocks_a_followers_editor_on_the_teachers_code_and_closing_it_locks_it_again():
    from harness.helpers import graph_sent, view_element
    from stockdemo.code.edits import EDITS, apply
    from stockdemo.ui.classmode.session import HINT

    def editor(at: AppTest) -> dict:
        return graph_sent(view_element(at, "code_editor"))

    desk, teacher = start_class()
    desk.switch_page(CODE_PAGE).run()
    room = class_session.class_room()
    student = app(CODE_PAGE, **{"class": teacher.code}).run()
    assert editor(student)["locked"] == HINT  # following: the teacher's code, locked
    assert editor(student)["draft"] is None  # nothing of theirs to keep
    start = apply(EDITS["loop"])
    room.ask(teacher, "detach", ".detach()", "Cut the graph", start)
    student.run()
    student.run()  # the bar takes the challenge, then the page opens on its code
    sent = editor(student)
    assert sent["locked"] is None and sent["doc"] == start
    assert sent["draft"] == f"{teacher.code}:1"  # their typing is kept in the tab, for this challenge
    assert "The teacher's challenge 1" in texts(student)
    assert not edits_offered(student)  # the answer is theirs to write
    own = app(CODE_PAGE)
    own.session_state["class_teacher"] = teacher
    assert edits_offered(own.run())  # the teacher keeps them
    room.close_challenge(teacher)
    student.run()
    student.run()
    sent = editor(student)
    assert sent["locked"] == HINT and sent["doc"] != start  # the teacher's own code again
    assert sent["draft"] is None
    assert "The teacher's challenge 1" not in texts(student)
    assert edits_offered(student)


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_a_student_who_reloads_mid_challenge_finds_their_last_code_and_its_verdict(store, tmp_path,
                                                                                   monkeypatch):
    """A new session on the same seat (a reload, a laptop that slept, a reconnect to another
    replica under make serve) opens the editor on the seat's last run and says its verdict,
    the one the check gave when it was run, with why it fails."""
    from harness.helpers import graph_sent, send_from_view, view_element
    from stockdemo.classroom.challenges import CHALLENGES
    from stockdemo.code.edits import EDITS, apply
    from stockdemo.sandbox import run_code

    redis_server = RedisServer(tmp_path).start() if store == "redis" else None
    if redis_server is not None:
        monkeypatch.setenv("STOCKDEMO_REDIS_URL", redis_server.url)
        class_session.class_room.clear()
    try:
        desk, teacher = start_class()
        desk.switch_page(CODE_PAGE).run()
        start = apply(EDITS["loop"])
        class_session.class_room().ask(teacher, "detach", ".detach()", "Cut the graph", start)
        before = app(CODE_PAGE, **{"class": teacher.code}).run()
        before.run()  # the bar takes the challenge, then the page opens on its code
        mine = start.replace("h = self.cell(x[:, t], h)", "h = self.cell(x[:, t], h) * 2")
        send_from_view(before, key="code_editor", trigger={"run": {"code": mine, "n": 1}})
        verdict = CHALLENGES["detach"].check.verdict(mine, run_code)
        assert not verdict.passes and verdict.reason  # the check's own words on why it fails
        said = f"{verdict.sentence} {verdict.reason}"
        assert "does not pass yet" in texts(before) and any(t.value == said for t in before.text)

        after = app(CODE_PAGE, **{"class": teacher.code, "seat": before.session_state["class_seat"]})
        after.run().run()  # a new session: nothing of the tab's own is left in it
        assert graph_sent(view_element(after, "code_editor"))["doc"] == mine
        assert "does not pass yet" in texts(after) and any(t.value == said for t in after.text)
        assert "Your editor is yours" not in texts(after)  # the verdict, not the first run's hint
    finally:
        if redis_server is not None:
            redis_server.stop()


def test_a_shown_runs_change_is_its_changed_lines_with_one_line_around_them_less_indented():
    from stockdemo.ui.classmode.challenge import change_of

    start = "def forward(self, x):\n    for t in x:\n        h = g(h)\n    return h\n"
    assert change_of(start, start.replace("h = g(h)", "h = g(h) * 2")).splitlines() == [
        " for t in x:", "-    h = g(h)", "+    h = g(h) * 2", " return h"]
    assert change_of(start, start) == start.rstrip()  # nothing changed: its forward, whole
    blank_after = "def forward(self, x):\n    h = g(h)\n\n    return h\n"  # a blank line as context
    assert change_of(blank_after, blank_after.replace("g(h)", "g(h) * 2")).split("\n") == [
        " def forward(self, x):", "-    h = g(h)", "+    h = g(h) * 2", " "]


def test_the_lessons_your_turn_step_lets_the_teacher_ask_its_challenge_and_no_one_else():
    number, step = next((i, s) for i, s in enumerate(STEPS, start=1) if s.challenge is not None)
    _, teacher = start_class()
    room = class_session.class_room()
    alone = app(LESSON, step=str(number)).run()  # not in a class: the step asks the room itself
    assert not alone.exception and not [b for b in alone.button if b.key == "lesson_ask"]
    student = app(LESSON, step=str(number), **{"class": teacher.code}).run()
    assert not student.exception and not [b for b in student.button if b.key == "lesson_ask"]
    desk = app(LESSON, step=str(number))
    desk.session_state["class_teacher"] = teacher
    desk.run()
    assert not desk.exception
    assert desk.button(key="lesson_ask").label == f"Ask the class: {step.challenge.title}"
    assert room.open_challenge(teacher.code) is None
    desk.button(key="lesson_ask").click().run()  # then on to Your code, where the gallery fills
    asked = room.open_challenge(teacher.code)
    assert asked is not None and asked.id == f"lesson:{step.challenge.id}"
    assert asked.start == step.challenge.start


def test_a_class_starts_with_a_lessons_link_and_a_refused_one_says_its_line_and_key():
    from stockdemo.lessons import LessonError, lesson_to_link, parse_lesson, shipped_lesson

    lesson = shipped_lesson("training-loop")
    bad = lesson.text.replace("[[steps]]", '[[steps]]\ncolour = "blue"', 1)
    with pytest.raises(LessonError) as refused:
        parse_lesson(bad)
    at = app(CLASS_PAGE).run()
    at.selectbox(key="class_start_lesson").select("own").run()
    assert at.button(key="class_start").disabled  # no lesson of one's own yet
    at.text_input(key="class_lesson_link").input(f"https://host/lesson?lesson={lesson_to_link(bad)}").run()
    assert [e.value for e in at.error] == [f"This lesson was refused: {refused.value}."]
    assert f"line {refused.value.line}, {refused.value.key}" in at.error[0].value
    at.text_input(key="class_lesson_link").input(
        f"https://host/lesson?lesson={lesson_to_link(lesson.text)}&step=2").run()
    assert not at.error and any(f"{lesson.title}: {len(lesson.steps)} steps" in c.value for c in at.caption)
    at.button(key="class_start").click().run()
    teacher = at.session_state["class_teacher"]
    room = class_session.class_room()
    assert room.lesson(teacher.code, room.poll(teacher.code, None, False).lesson).digest == lesson.digest
