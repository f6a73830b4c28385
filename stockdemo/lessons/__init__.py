"""Teachers' own lessons: a TOML file of steps, questions and challenges checked on the graph.

A lesson is untrusted text, whether it comes from a file in ``lessons/``, a teacher's upload
or a link. One parser reads all three against a schema (``schema.py``): known keys only,
typed, lengths, counts, nesting and total size bounded; it raises nothing but
``LessonError``, which names the line and the key. Nothing in a lesson runs in the server:
a step's answer is a *declared* measure (``measures.py``) that our code computes, and code
in a lesson (a step's code, a challenge's start and answer) runs only in the sandbox
(``stockdemo.sandbox.run_code``).

The API (``classlesson`` builds the authoring page and the class on it)::

    from stockdemo.lessons import (Lesson, LessonError, builtin_lesson, lesson_from_link,
                                   lesson_to_link, parse_lesson)

    lesson = parse_lesson(text)      # str or bytes -> Lesson; raises LessonError only
    lesson = builtin_lesson()        # lessons/dynamic-graphs.toml, parsed once per process
    lesson.id, lesson.title, lesson.text, lesson.digest   # text: what was parsed (store it)
    for number, step in enumerate(lesson.steps, 1):       # ordered; number = the ?step= value
        step.id, step.title, step.context, step.question  # stable id; words a learner reads
        step.ask                     # Question: kind "number" (low, high) or "choice"
                                     # (choices, choice_ids); parse / correct / is_right
        step.page, step.link_label, step.query            # the experiment's page and link
        step.settings                # RunConfig | TrainConfig | LengthsConfig | CodeSettings
        answer = step.reveal()       # live: Answer(label, value, detail); code via the sandbox
        step.live_answer()           # the same, its words Messages: said(answer.label, "es")
        step.ask.correct(answer.value)                    # the answer the live run stands for
        step.challenge               # Challenge | None

    try:
        parse_lesson(upload)
    except LessonError as err:
        err.line, err.key, err.message  # 12, "steps[2].question.low", "expected a whole number"
        str(err)                        # "line 12, steps[2].question.low: expected a whole number"

    link = lesson_to_link(lesson.text)      # compressed, URL-safe; None when too long
    text, message = lesson_from_link(raw)   # never raises: (text, None) or (None, why)
    lesson, message = open_lesson(raw)      # ?lesson=: a shipped lesson's name, or a link; never raises

A challenge (a lesson's, or one of ``stockdemo.classroom.challenges.CHALLENGES``)::

    challenge.id, challenge.title, challenge.prompt   # stable id; words a student reads
    challenge.start, challenge.answer                 # code: where the editor opens; the reference
    verdict = challenge.check.verdict(source, run_code, first=run)   # never raises
    verdict.passes, verdict.sentence, verdict.reason  # Messages: said(verdict.reason, "zh_CN"), verdict.runs

Checks are composed from a vocabulary of graph facts with ``all``, ``any`` and ``not``
(``facts.py``); the same tables serve a lesson file and the built-in challenges::

    check = parse_check({"all": [{"fact": "op", "op": "AddBackward0", "after": "recurrent",
                                  "data": True}]}, reference=answer_source)

Modules: ``schema`` (text -> Lesson), ``steps`` (Lesson, Step, Challenge, CodeSettings),
``question`` (how an answer is given and marked), ``measures`` (declared answers),
``facts`` (the vocabulary, Check, Verdict), ``record`` (the one reader of a run's record),
``shape`` (``shape_key``, ``difference``, ``matching``), ``variants`` (the code run again
otherwise), ``link`` (a lesson in a link), ``files`` (the lessons this project ships).
"""

from stockdemo.lessons.checks import Check, Verdict, parse_check
from stockdemo.lessons.code_answers import CodeSettings
from stockdemo.lessons.files import builtin_lesson, shipped, shipped_lesson
from stockdemo.lessons.link import lesson_from_link, lesson_to_link, open_lesson
from stockdemo.lessons.measures import Answer
from stockdemo.lessons.question import Question
from stockdemo.lessons.schema import LessonError, parse_lesson
from stockdemo.lessons.steps import Challenge, Lesson, Step

__all__ = ["Answer", "Challenge", "Check", "CodeSettings", "Lesson", "LessonError", "Question", "Step",
           "Verdict", "builtin_lesson", "lesson_from_link", "lesson_to_link", "open_lesson", "parse_check",
           "parse_lesson", "shipped", "shipped_lesson"]
