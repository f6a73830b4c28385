"""Writing a lesson, without a page: a challenge's check tried on its two programs, and the
lesson's own code run in the sandbox's queue as the session that asked for its answer."""

from __future__ import annotations

import pytest

from stockdemo.authoring import NO_REFERENCE, REFERENCE_FAILS, START_PASSES, Trial, try_challenge
from stockdemo.i18n import later
from stockdemo.lessons import Verdict, code_answers, shipped_lesson
from stockdemo.sandbox import run_code

LESSON = shipped_lesson("transformer-block")


@pytest.mark.parametrize(("reference", "start", "warned"), [
    (Verdict(True, "s"), Verdict(False, "s", "no mask"), ()),
    (Verdict(True, "s"), Verdict(True, "s"), (START_PASSES,)),
    (Verdict(False, "s", "no MaskedFill"), Verdict(False, "s", "x"),
     (later(REFERENCE_FAILS, reason="no MaskedFill"),)),
    (None, Verdict(True, "s"), (NO_REFERENCE, START_PASSES)),
])
def test_a_trial_warns_when_the_check_cannot_tell_the_reference_from_the_start(reference, start, warned):
    assert Trial(LESSON.steps[1].challenge, reference, start).warnings == warned


def test_a_trial_runs_the_reference_answer_and_the_starting_code_through_the_runner_given():
    challenge = LESSON.steps[1].challenge
    ran: list[str] = []

    def runner(source: str):
        ran.append(source)
        return run_code(source)

    trial = try_challenge(challenge, runner)
    assert set(ran) == {challenge.answer, challenge.start}
    assert trial.reference.passes and not trial.start.passes and trial.warnings == ()


def test_a_lessons_code_runs_in_the_queue_as_the_session_that_asked_for_the_answer(monkeypatch):
    asked: list[str | None] = []

    def recorded(source: str, *args, who: str | None = None, **kwargs):
        asked.append(who)
        return run_code(source, *args, who=who, **kwargs)

    monkeypatch.setattr(code_answers, "run_code", recorded)
    step = LESSON.steps[0]
    with code_answers.runs_for("session-1"):
        inside = step.reveal()
    outside = step.reveal()
    assert inside == outside and inside.value == "4"  # the same answer, in another queue
    assert asked and asked[: len(asked) // 2] == ["session-1"] * (len(asked) // 2)
    assert asked[len(asked) // 2:] == [None] * (len(asked) // 2)
