"""A lesson's questions by step number, as the class asks them.

``Question`` (what an answer may be, and when it is right) is the lessons' own
(``stockdemo.lessons.question``); each step of a lesson declares its question, and a class
reads them from its lesson (``Classroom.lesson``). ``QUESTIONS`` are ours
(``lessons/dynamic-graphs.toml``).
"""

from __future__ import annotations

from stockdemo.lessons import Lesson, builtin_lesson
from stockdemo.lessons.question import Question


def questions_of(lesson: Lesson) -> dict[int, Question]:
    """Step number (1, 2, ...) -> how its question is answered and marked."""
    return {number: step.ask for number, step in enumerate(lesson.steps, 1)}


QUESTIONS: dict[int, Question] = questions_of(builtin_lesson())
