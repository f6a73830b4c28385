"""Class mode, a plug-in: a teacher starts a class, students follow the teacher's page and
answer each lesson question before the reveal.

Nothing below it imports it: ``register`` puts its listeners on ``ui.hooks``, and the
pages' building blocks call the hooks without knowing who listens. ``stockdemo.ui``
registers it once per process; the Class page (pages/classroom.py) is its own page.

- ``session``: what a tab holds in a class; what its knobs tell the class;
- ``bar``: the class line on every page, and a following student's page;
- ``follow``: the teacher's settings into a follower's controls, and out of the teacher's;
- ``questions``: a lesson question for a student; ``question_console``: for the teacher;
- ``challenge``: a challenge on a student's Your code page; ``gallery``: the teacher's side;
- ``push``, ``rebalance``, ``watch``: the server reruns each student's page the moment the class
  changes (``watch``: a page's side of it);
- ``join``, ``start``, ``console``, ``keeper``, ``mover``: joining, starting a class with its
  lesson, the teacher's console, the teacher's key kept by the tab, a tab moved to a less busy
  replica; ``keys``: its session keys.
"""

from __future__ import annotations

from stockdemo.ui import hooks
from stockdemo.ui.classmode import bar, challenge, follow, gallery, join, questions, session
from stockdemo.ui.classmode.console import teacher_console
from stockdemo.ui.classmode.join import join_box, student_code
from stockdemo.ui.classmode.session import leave, teacher
from stockdemo.ui.classmode.start import start_box

__all__ = ["join_box", "leave", "register", "start_box", "student_code", "teacher", "teacher_console"]


# Each hook class mode answers, with its listener.
LISTENERS = (
    (hooks.PAGE_INTRO, join.intro), (hooks.PAGE_OPENED, bar.class_bar),
    (hooks.KNOB_DRAWN, session.knob_drawn), (hooks.KNOB_MOVED, session.knob_moved),
    (hooks.SETTINGS_WANTED, follow.take_settings), (hooks.SETTINGS_READ, follow.publish_settings),
    (hooks.CONTROLS_LOCKED, follow.following_hint), (hooks.MOVES_SHARED, follow.moves_shared),
    (hooks.STAGE_DRAWN, follow.drawn), (hooks.STAGE_SETTLED, follow.stage_settled),
    (hooks.LESSON_QUESTION, questions.lesson_question), (hooks.LESSON_DRAWN, questions.lesson_drawn),
    (hooks.CODE_COMPARISON, challenge.comparison), (hooks.CODE_EDITS_OFF, follow.edits_off),
    (hooks.CODE_DRAFT, follow.code_draft), (hooks.IN_CLASS, session.in_class),
    (hooks.LESSON_CHALLENGE, gallery.lesson_challenge), (hooks.LESSON_SHOWN, session.class_lesson),
)


def register() -> None:
    """Listen on every hook class mode answers; once per process (listening twice is once)."""
    for event, listener in LISTENERS:
        hooks.listen(event, listener)
