"""Class mode: the class follows the teacher's page, and answers before the reveal.

One module per idea:

- ``protocol``: ``Classroom``, every action of a teacher or a student: starting, following,
  joining, polling here; ``room`` (the store, the class's lifetime, who may act), ``answers``
  (a lesson question answered and revealed) and ``challenge_runs`` (a challenge's runs) are
  its parts;
- ``store``: the few Redis commands it uses, and ``MemoryStore``, their stand-in in one
  process; the keys a class owns;
- ``state``: ``ClassState``, what members see, and which settings of a page travel;
- ``questions``: how each lesson question is answered and marked;
- ``gallery``: a challenge's runs, one per seat, grouped by the graph they built;
- ``results``: the answers as rows, their summaries and the teacher's CSV;
- ``codes``: class codes, the teacher's key, students' seats, wrong codes counted;
- ``replicas``: the roll of server processes and the class tabs each holds;
- ``errors``: the refusals, each with a message for the person who asked.

The names other modules use are importable from here: ``from stockdemo.classroom import
Classroom, ClassError``.
"""

from __future__ import annotations

from stockdemo.classroom.answers import revealed_words
from stockdemo.classroom.codes import new_seat
from stockdemo.classroom.errors import (
    ENDED,
    LOCKED,
    NOT_TEACHER,
    UNAVAILABLE,
    ClassError,
    ClassRateLimited,
    ClassUnavailable,
)
from stockdemo.classroom.gallery import Asked, ChallengeRow, Failure, Gallery, Group, Submission
from stockdemo.classroom.protocol import CLASS_TTL_S, PRESENCE_S, Classroom, open_classroom
from stockdemo.classroom.questions import QUESTIONS, Question, questions_of
from stockdemo.classroom.results import QuestionSummary, ResultRow, live_value, results_csv, summarise
from stockdemo.classroom.state import (
    LESSON,
    PLAYGROUND,
    ClassState,
    Teacher,
    followed_knobs,
    page_params,
    version_of,
)
from stockdemo.classroom.store import MemoryStore

__all__ = ["CLASS_TTL_S", "ENDED", "Asked", "ChallengeRow", "Failure", "Gallery", "Group", "Submission",
           "LESSON", "LOCKED", "NOT_TEACHER", "PLAYGROUND", "PRESENCE_S",
           "QUESTIONS", "UNAVAILABLE", "ClassError", "ClassRateLimited", "ClassState",
           "ClassUnavailable", "Classroom", "MemoryStore", "Question", "QuestionSummary",
           "ResultRow", "Teacher", "followed_knobs", "new_seat", "open_classroom", "page_params",
           "questions_of", "live_value", "results_csv", "revealed_words", "summarise", "version_of"]
