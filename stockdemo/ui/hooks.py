"""Events the page's building blocks announce, and questions they ask, without knowing who listens.

A widget says "this knob was drawn with this value"; the stage says "I have drawn this
run"; the frame says "this page opened". A plug-in (class mode, ``ui/classmode``)
listens and acts: a teacher's value goes to the class, a following student's page
opens the teacher's. With no listener, every event is a no-op and every question
answers None, so the layers below work the same without any plug-in.

Each event is declared once below with what it carries; a name not declared here is a
mistake and raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Events: ``fire(EVENT, *args)`` calls every listener in the order they listened.
PAGE_OPENED = "page opened"  # (page file), after the page's title and intro: a bar may go under them
KNOB_DRAWN = "knob drawn"  # (knob, value) a knob's widget as drawn in this run
KNOB_MOVED = "knob moved"  # (knob name) a widget moved by hand: its on_change, before the run
SETTINGS_WANTED = "settings wanted"  # () before the Playground reads its settings: they may be set first
SETTINGS_READ = "settings read"  # (config, view) the Playground's settings, once read
STAGE_DRAWN = "stage drawn"  # (config, view) last in a run that drew the Playground's stage, all of it
STAGE_SETTLED = "stage settled"  # (picture key or None) last in the panels' run under the stage
LESSON_DRAWN = "lesson drawn"  # () last in a run that drew a Lesson step, all of it

# Questions: ``ask(QUESTION, *args)`` -> the first listener's answer that is not None.
PAGE_INTRO = "page intro"  # ((the teacher's, a student's) intro) -> the one to show instead, or None
CONTROLS_LOCKED = "controls locked"  # () -> why this tab's controls cannot move (a hint), or None
MOVES_SHARED = "moves shared"  # () -> True when this tab's moves go to others (a class's teacher)
LESSON_QUESTION = "lesson question"  # (step) -> how the step's question was asked (steps.InClass)
CODE_COMPARISON = "code comparison"  # (code, its picture) on Your code -> a Comparison beside it, or None
CODE_EDITS_OFF = "code edits off"  # () on Your code -> why its ready-made edits are not offered, or None
CODE_DRAFT = "code draft"  # () on Your code -> a name under which the tab keeps unsent typing, or None
IN_CLASS = "in class"  # () -> True when this tab is in a class (its whole-page runs are heard there), or None
LESSON_CHALLENGE = "lesson challenge"  # (challenge id, code) a step's challenge -> True: offered to a class
LESSON_SHOWN = "lesson shown"  # () -> the Lesson page's lesson (stockdemo.lessons.Lesson): a class's, or None

EVENTS = frozenset({PAGE_OPENED, KNOB_DRAWN, KNOB_MOVED, SETTINGS_WANTED, SETTINGS_READ, STAGE_DRAWN,
                    STAGE_SETTLED, LESSON_DRAWN, PAGE_INTRO, CONTROLS_LOCKED, MOVES_SHARED,
                    LESSON_QUESTION, CODE_COMPARISON, CODE_EDITS_OFF, CODE_DRAFT, IN_CLASS,
                    LESSON_CHALLENGE, LESSON_SHOWN})

# Filled once per process at import (``stockdemo.ui``'s registration), read by every session.
_LISTENERS: dict[str, list[Callable[..., Any]]] = {event: [] for event in EVENTS}


def listen(event: str, listener: Callable[..., Any]) -> None:
    """Call ``listener`` on ``event`` from now on; listening twice with one function is once."""
    listeners = _LISTENERS[event]
    if listener not in listeners:
        listeners.append(listener)


def fire(event: str, *args: Any) -> None:
    """Tell every listener of ``event``."""
    for listener in _LISTENERS[event]:
        listener(*args)


def ask(question: str, *args: Any) -> Any:
    """-> the first listener's answer to ``question`` that is not None; None if none answers."""
    for listener in _LISTENERS[question]:
        answer = listener(*args)
        if answer is not None:
            return answer
    return None
