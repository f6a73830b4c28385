"""The built-in lesson: ``lessons/dynamic-graphs.toml``, read by ``stockdemo.lessons``.

Eight experiments on the seed's StockPredictor, the class's turn at the code, and an
optional tenth, each a step whose answer is a declared measure computed live. What only
this module does is name it: ``LESSON`` and its ``STEPS``, for code that speaks of *the*
lesson (class mode's questions of the built-in lesson).
"""

from __future__ import annotations

from stockdemo.lessons import Answer, Lesson, Step, builtin_lesson

LESSON: Lesson = builtin_lesson()
STEPS: tuple[Step, ...] = LESSON.steps

__all__ = ["LESSON", "STEPS", "Answer", "Step"]
