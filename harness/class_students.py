"""Students answering a class, for tests that run them in processes of their own.

Spawned processes import this module to find their function: it imports only the
class's state, not the test module's Streamlit and AppTest, so each starts quickly.
"""

from __future__ import annotations

from stockdemo.classroom import ClassError, Classroom, open_classroom


def answer_twice(room: Classroom, code: str, seat: str, value: str) -> int:
    """A student answers, then answers again (a double click, a retry): -> answers accepted."""
    accepted = 0
    for attempt in (value, str(int(value) + 1)):
        try:
            room.answer(code, seat, attempt)
            accepted += 1
        except ClassError:
            pass
    return accepted


def student_process(url: str, code: str, seats: list[str]) -> int:
    """The students of ``seats`` answering from one process of their own -> answers accepted."""
    room = open_classroom(url)
    return sum(answer_twice(room, code, seat, "4") for seat in seats)
