"""A lesson question as the class answers it: opened (with a countdown), answered once per
seat, revealed with the live answer, counted and marked.

No peeking: the live answer is computed on the teacher's side and written here only by
``reveal``; a student's look at the class (``Classroom.poll``) holds it only once
``revealed`` is set. Stored (stockdemo/classroom/store.py): ``sd:class:CODE:answers:N``
(seat -> its answer, HSETNX: the first counts) and ``sd:class:CODE:reveals``.
"""

from __future__ import annotations

import json
from collections import Counter

from stockdemo.classroom.codes import seat_number
from stockdemo.classroom.errors import LOCKED, ClassError
from stockdemo.classroom.results import ResultRow, answer_record, live_value, read_answer, read_results
from stockdemo.classroom.room import Room
from stockdemo.classroom.state import Teacher
from stockdemo.classroom.store import class_key, reachable
from stockdemo.config import COUNTDOWN, STEP, parse_seat
from stockdemo.i18n import N_, Message
from stockdemo.i18n.stored import bounded, from_data, to_data

MAX_REVEAL_LEN = 2000
# An answer sent in the last moment of a countdown is still on its way when the
# countdown ends on screen: it counts if it arrives within this long after.
LOCK_GRACE_S = 0.5


def revealed_words(live: dict) -> tuple[str, str, str]:
    """A revealed answer as stored -> (label, value, detail) in the language spoken now."""
    return str(from_data(live.get("label"))), str(live_value(live)), str(from_data(live.get("detail")))


class Answers(Room):
    """The lesson's questions: the teacher opens, reveals and reads; students answer."""

    # -- the teacher ----------------------------------------------------------

    def open_question(self, teacher: Teacher, step: object, countdown_s: object = 0) -> int:
        """Open the question of a lesson step, with a countdown that locks answers (0: none).

        Answers given to it before are kept; a reopened question takes new ones until its lock.
        """
        number, _ = STEP.parse(step)
        fields = self._authorise(teacher)
        if number > len(self.lesson(teacher.code, fields.get("lesson") or "").steps):
            raise ClassError(N_("The class's lesson has no such step."))
        seconds, _ = COUNTDOWN.parse(countdown_s)
        now = self.clock()
        return self._update(teacher, {"question": number, "revealed": 0, "answer": "",
                                      "opened_at": repr(now),
                                      "deadline": repr(now + seconds) if seconds else ""})

    def reveal(self, teacher: Teacher, label: Message | str, value: Message | str,
               detail: Message | str) -> int:
        """Close the open question, whatever the count, and show every student the live answer
        (its words kept as Messages, said in each reader's language: ``revealed_words``)."""
        fields = self._authorise(teacher)
        step = int(fields.get("question") or 0)
        if not step:
            raise ClassError(N_("No question is open."))
        answer = json.dumps({name: to_data(bounded(words, MAX_REVEAL_LEN))
                             for name, words in (("label", label), ("value", value), ("detail", detail))})
        return self._update(teacher, {"revealed": 1, "answer": answer},
                            extra=[(f"{class_key(teacher.code)}:reveals", str(step), answer)])

    def distribution(self, teacher: Teacher, step: object) -> dict[str, int]:
        """Answer -> how many students gave it, for one lesson step."""
        self._authorise(teacher)
        number, _ = STEP.parse(step)
        with reachable():
            values = self.db.hvals(f"{class_key(teacher.code)}:answers:{number}")
        return dict(Counter(read_answer(v)[0] for v in values))

    def tally(self, teacher: Teacher, step: object) -> tuple[int, int]:
        """(answered, connected) for one lesson step: the live count on the teacher's screen."""
        self._authorise(teacher)
        number, _ = STEP.parse(step)
        with reachable():
            answered = self.db.hlen(f"{class_key(teacher.code)}:answers:{number}")
        return int(answered), self._presence(teacher.code)[0]

    def results(self, teacher: Teacher) -> tuple[list[ResultRow], dict[int, str]]:
        """Every answer of the class, marked against the live answers revealed
        -> (rows by question and seat, {step: live answer value})."""
        fields = self._authorise(teacher)
        steps = self.lesson(teacher.code, fields.get("lesson") or "").steps
        with reachable():
            return read_results(self.db, teacher.code, steps)

    # -- students -------------------------------------------------------------

    def answer(self, code: str, seat: object, raw: object) -> str:
        """A student's answer to the open question -> the answer as counted.

        Refused, with a message: no seat, no open question, revealed already, the
        countdown ran out, a value of the wrong kind or out of bounds, or a second answer.
        """
        main, state = self._seated(code, seat)
        if state.question is None:
            raise ClassError(N_("No question is open."))
        if state.revealed:
            raise ClassError(N_("The answer has been revealed: answers are closed."))
        now = self.clock()
        if state.deadline is not None and now > state.deadline + LOCK_GRACE_S:
            raise ClassError(LOCKED)
        steps = self.lesson(code, state.lesson).steps
        if state.question > len(steps):
            raise ClassError(N_("No question is open."))
        value, message = steps[state.question - 1].ask.parse(raw)
        if value is None:
            raise ClassError(message)
        seconds = max(0.0, now - (state.opened_at or now))
        record = answer_record(value, seconds)
        with reachable():
            seat_number(self.db, code, seat)
            pipe = self.db.pipeline()
            pipe.hsetnx(f"{main}:answers:{state.question}", seat, record)
            self._touch(pipe, code)
            added = pipe.execute()[0]
        if not added:
            raise ClassError(N_("You have already answered this question; your first answer counts."))
        return value

    def revealed_answer(self, code: str, step: int) -> dict[str, str] | None:
        """The live answer the teacher revealed for a lesson step (label, value, detail), if any."""
        with reachable():
            text = self.db.hget(f"{class_key(code)}:reveals", str(step))
        return None if text is None else json.loads(text)

    def my_answer(self, code: str, seat: object, step: int) -> str | None:
        """What this seat answered to a lesson step, if anything."""
        seat = parse_seat(seat)
        if seat is None:
            return None
        with reachable():
            record = self.db.hget(f"{class_key(code)}:answers:{step}", seat)
        return None if record is None else read_answer(record)[0]
