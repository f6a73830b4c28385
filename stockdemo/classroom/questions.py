"""The built-in lesson's questions by step number, as the class asks them.

``Question`` (what an answer may be, and when it is right) is the lessons' own
(``stockdemo.lessons.question``); each step of ``lessons/dynamic-graphs.toml`` declares its
question, and this table reads them from the parsed file.
"""

from __future__ import annotations

from stockdemo.lessons import builtin_lesson
from stockdemo.lessons.question import Question

QUESTIONS: dict[int, Question] = {number: step.ask for number, step in enumerate(builtin_lesson().steps, 1)}
