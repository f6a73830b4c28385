"""Writing a lesson: what its author sees before teaching it.

The authoring page (pages/author.py) shows each step's answer computed live, and tries each
challenge's check on two programs: its reference answer must pass it, and its starting code
must fail it (a check the starting code passes asks nothing of a student). ``try_challenge``
is that trial; its warnings are whole sentences the author reads. Every run goes through the
runner it is given: the sandbox, in the author's session's fair share of its queue.

    trial = try_challenge(step.challenge, lambda source: run_code(source, who=session))
    trial.reference.passes, trial.start.passes, trial.warnings
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from stockdemo.i18n import N_, Message, later
from stockdemo.lessons import Lesson, LessonError, parse_lesson
from stockdemo.lessons.checks import Verdict
from stockdemo.lessons.steps import Challenge
from stockdemo.sandbox.protocol import CodeRun

Runner = Callable[[str], CodeRun]  # source -> its run: stockdemo.sandbox.run_code, as a session's
MAX_READ = 32  # texts whose reading is kept: the drafts of the authors writing now
# What the author should fix: Messages, said in the author's language where shown.
REFERENCE_FAILS = N_("This check fails the reference answer: {reason}")
START_PASSES = later("This check passes the starting code: a student who changes nothing passes it. "
                     "Make it ask for the change.")
NO_REFERENCE = later("This challenge has no reference answer, so nothing shows that its check can be passed.")


@dataclass(frozen=True)
class Trial:
    """A challenge's check tried on its reference answer and on its starting code."""

    challenge: Challenge
    reference: Verdict | None  # the reference answer's verdict; None when it has none
    start: Verdict  # the starting code's verdict

    @property
    def warnings(self) -> tuple[Message, ...]:
        """What the author should fix, in sentences; () when the check tells the two apart."""
        said = []
        if self.reference is None:
            said.append(NO_REFERENCE)
        elif not self.reference.passes:
            said.append(later(REFERENCE_FAILS, reason=self.reference.reason))
        if self.start.passes:
            said.append(START_PASSES)
        return tuple(said)


@lru_cache(maxsize=MAX_READ)
def read_lesson(text: str | bytes) -> tuple[Lesson | None, LessonError | None]:
    """A lesson's text as its author wrote it (or a file's bytes) -> (the lesson, None), or
    (None, why it was refused). Read once per text for every session (a lesson is frozen).
    Never raises."""
    try:
        return parse_lesson(text), None
    except LessonError as err:
        return None, err


def try_challenge(challenge: Challenge, run: Runner) -> Trial:
    """Judge the reference answer and the starting code with the challenge's check. Never
    raises (a check's verdict never does)."""
    reference = None if challenge.answer is None else challenge.check.verdict(challenge.answer, run)
    return Trial(challenge, reference, challenge.check.verdict(challenge.start, run))
