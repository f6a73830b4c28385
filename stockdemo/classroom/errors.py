"""Class mode's refusals: each carries a message for the person who asked."""

from __future__ import annotations

UNAVAILABLE = ("Class mode is unavailable: the class server does not answer. "
               "Every page still works on its own.")
ENDED = "This class has ended or expired."
NOT_TEACHER = "Only the teacher of this class can do that."
LOCKED = "Time is up: answers to this question are locked."


class ClassError(Exception):
    """A refusal, with a message for the person who asked."""


class ClassUnavailable(ClassError):
    """The shared store (Redis) does not answer."""


class ClassRateLimited(ClassError):
    """Too many wrong codes from this tab (or the server) in the window."""
