"""Class mode's refusals: each carries a message for the person who asked."""

from __future__ import annotations

from stockdemo.i18n import N_, tr

UNAVAILABLE = N_("Class mode is unavailable: the class server does not answer. "
               "Every page still works on its own.")
ENDED = N_("This class has ended or expired.")
NOT_TEACHER = N_("Only the teacher of this class can do that.")
LOCKED = N_("Time is up: answers to this question are locked.")


class ClassError(Exception):
    """A refusal, with a message for the person who asked: a msgid or a Message, said in the
    language spoken where it is shown (``str``)."""

    def __str__(self) -> str:
        message = self.args[0] if self.args else ""
        return tr(message) if isinstance(message, str) else str(message)


class ClassUnavailable(ClassError):
    """The shared store (Redis) does not answer."""


class ClassRateLimited(ClassError):
    """Too many wrong codes from this tab (or the server) in the window."""
