"""A class's answers as the teacher keeps them: one row per answer, summaries, and the CSV.

Each answer is stored as ``{"a": answer, "s": seconds to answer}`` under its seat
(``answer_record``). Rows name seats by their number in the class, never by the token,
and are marked against the live answers the teacher revealed.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stockdemo.classroom.gallery import ChallengeRow
from stockdemo.classroom.store import Store, class_key
from stockdemo.config import STEP
from stockdemo.lessons import Question


def answer_record(answer: str, seconds: float) -> str:
    """An answer as the store keeps it under its seat."""
    return json.dumps({"a": answer, "s": round(seconds, 2)})


def read_answer(text: str) -> tuple[str, float]:
    """A stored answer -> (answer, seconds to answer)."""
    try:
        record = json.loads(text)
        return str(record["a"]), float(record["s"])
    except (ValueError, KeyError, TypeError):
        return text, 0.0  # written by hand or by an older version: the bare answer


@dataclass(frozen=True)
class ResultRow:
    """One answer, as the teacher's CSV holds it. ``seat`` is a number, never the token."""

    question: int
    seat: int
    answer: str
    correct: bool | None  # None: not revealed yet
    seconds: float

    # A challenge's row (gallery.ChallengeRow) fills the same columns: "challenge N", the
    # seat, its final code, whether it passes, seconds to its first pass, and its runs.
    CSV_HEADER = ("question", "seat", "answer", "correct", "seconds_to_answer", "runs")

    def csv_row(self) -> tuple[object, ...]:
        correct = "" if self.correct is None else ("yes" if self.correct else "no")
        return self.question, self.seat, self.answer, correct, f"{self.seconds:.1f}", ""


@dataclass(frozen=True)
class QuestionSummary:
    """One question's results: how many answered, how many were right, how fast."""

    question: int
    answers: int
    live: str | None  # the live answer revealed, if it was
    right: int | None  # None: not revealed yet
    median_s: float | None
    rule: str

    @property
    def share_right(self) -> float | None:
        return None if self.right is None or not self.answers else self.right / self.answers


def results_csv(rows: Iterable[ResultRow], challenges: Iterable[ChallengeRow] = ()) -> str:
    """The class's answers, then its challenges, as CSV text: question, seat, answer,
    correct, seconds to answer (a challenge: to its first pass), runs (a challenge's)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ResultRow.CSV_HEADER)
    writer.writerows(row.csv_row() for row in rows)
    writer.writerows(row.csv_row() for row in challenges)
    return out.getvalue()


def summarise(rows: Iterable[ResultRow], reveals: Mapping[int, str],
              questions: Mapping[int, Question]) -> list[QuestionSummary]:
    """Rows -> one summary per question that has answers, in lesson order (``questions``: the
    class's lesson's, by step number)."""
    by_question: dict[int, list[ResultRow]] = {}
    for row in rows:
        by_question.setdefault(row.question, []).append(row)
    out = []
    for step in sorted(by_question):
        mine = by_question[step]
        revealed = step in reveals
        out.append(QuestionSummary(
            question=step, answers=len(mine), live=reveals.get(step),
            right=sum(bool(r.correct) for r in mine) if revealed else None,
            median_s=statistics.median(r.seconds for r in mine),
            rule=questions[step].rule if step in questions else ""))
    return out


def read_results(db: Store, code: str, questions: Mapping[int, Question]
                 ) -> tuple[list[ResultRow], dict[int, str]]:
    """Every answer of class ``code`` to its lesson's ``questions`` (by step number), marked
    against the live answers revealed, in one round trip -> (rows by question and seat,
    {step: live answer value})."""
    main = class_key(code)
    steps = range(STEP.low, STEP.high + 1)
    pipe = db.pipeline(transaction=False)
    pipe.hgetall(f"{main}:seats")
    pipe.hgetall(f"{main}:reveals")
    for step in steps:
        pipe.hgetall(f"{main}:answers:{step}")
    seats, reveals, *answers = pipe.execute()
    live = {int(step): json.loads(text)["value"] for step, text in reveals.items()}
    rows = []
    for step, given in zip(steps, answers, strict=True):
        question = questions.get(step)
        if question is None:  # a step number the lesson does not have: nobody answered it
            continue
        right = question.correct(live[step]) if step in live else None
        for seat, record in given.items():
            value, seconds = read_answer(record)
            rows.append(ResultRow(step, int(seats.get(seat) or 0), value,
                                  question.is_right(value, right) if step in live else None,
                                  seconds))
    rows.sort(key=lambda r: (r.question, r.seat))
    return rows, live
