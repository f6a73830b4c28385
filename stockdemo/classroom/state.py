"""What a class is as its members see it: the teacher's page, settings, step and question.

``ClassState`` is read from the class's hash in the store (``state_from_fields``) and
bumped to a new ``version`` by each teacher action. Only the settings a page's knobs
accept travel (``page_params``), each checked by its knob, so a teacher's link can
carry nothing a student's page would not take from its own URL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from stockdemo.config import (
    CLASS_KEY,
    LAB_TAB,
    PAGE_KNOBS,
    PRESENT,
    SEAT_KEY,
    STEP,
    VIEW,
    RunConfig,
    url_value,
)
from stockdemo.config import LESSON as LESSON_LINK  # the knob; LESSON below is the page

PLAYGROUND = "pages/playground.py"
LESSON = "pages/lesson.py"


def followed_knobs(page: str) -> tuple:
    """What a following student takes from the teacher on ``page``: the controls it binds
    to its link, and on the Lab the open experiment. Presenter mode stays each tab's own; a
    lesson never travels in a link to students (it holds the challenges' answers): the class
    keeps it (``Classroom.lesson``)."""
    knobs = tuple(k for k in PAGE_KNOBS.get(page, ()) if k not in (PRESENT, LESSON_LINK))
    return knobs + ((LAB_TAB,) if page == "pages/lab.py" else ())


def page_params(page: str, raw: Mapping[str, object]) -> dict[str, str]:
    """Untrusted settings of a page -> the ones it takes, each checked by its knob, as
    query values (a choice by its name: cell=gru). Defaults are left out. Never raises."""
    params: dict[str, str] = {}
    get = raw.get if hasattr(raw, "get") else (lambda _name: None)
    for knob in followed_knobs(page):
        given = get(knob.name)
        if given is None:
            continue
        value, _ = knob.parse(given)
        if value != knob.default and value != "":
            params[knob.name] = str(value)
    return params


@dataclass(frozen=True)
class Teacher:
    """What the teacher's session holds. ``key`` never goes into a link students see."""

    code: str
    key: str


@dataclass(frozen=True)
class ClassState:
    """What every member of a class sees, as of ``version`` (bumped by each teacher action)."""

    code: str
    version: int
    page: str  # the teacher's page, as a file relative to the app root
    params: dict[str, str]  # its settings, checked by page_params
    step: int  # the teacher's lesson step
    question: int | None  # lesson step whose question is open, or None
    revealed: bool
    answer: dict[str, str] | None = field(default=None)  # label, value, detail once revealed
    deadline: float | None = None  # when answers lock (time.time()), if the teacher set a countdown
    opened_at: float | None = None
    challenge: int | None = None  # the number of the challenge open (1, 2, ...), or None
    shown: int = 0  # bumped each time the teacher shows a run to the class (0: none shown)
    lesson: str = ""  # the class's lesson, by its digest ("": ours)

    @property
    def settings(self) -> dict[str, str]:
        """The teacher's Playground settings, when the teacher is on the Playground."""
        return self.params if self.page == PLAYGROUND else {}

    def run_settings(self) -> tuple[RunConfig, str]:
        """The teacher's Playground -> (RunConfig, graph view)."""
        config, _ = RunConfig.from_params(self.settings)
        view, _ = VIEW.parse(self.settings.get(VIEW.name))
        return config, view

    def link_query(self, seat: str, present: bool) -> dict[str, str]:
        """A following tab's address on the teacher's page: the teacher's settings, the class
        and the seat (a reload is still this student on this page), presenter mode if on."""
        query = {name: url_value(name, value) for name, value in self.params.items()}
        query.update({CLASS_KEY: self.code, SEAT_KEY: seat})
        if present:
            query[PRESENT.name] = "1"
        return query

    def locked(self, now: float | None = None) -> bool:
        """The countdown has run out (answers are refused), or the answer is out."""
        now = time.time() if now is None else now
        return self.revealed or (self.deadline is not None and now > self.deadline)

    def seconds_left(self, now: float | None = None) -> float | None:
        if self.deadline is None or self.revealed:
            return None
        now = time.time() if now is None else now
        return max(0.0, self.deadline - now)


def version_of(state: ClassState | None, now: float) -> tuple[int, tuple[str, ...]]:
    """(version, what the class bar shows: page, step, question, revealed, locked); (0, ()) ended."""
    if state is None:
        return 0, ()
    return state.version, (state.page, str(state.step), str(state.question or ""),
                           str(int(state.revealed)), str(int(state.locked(now))))


def state_from_fields(code: str, fields: Mapping[str, str]) -> ClassState | None:
    """The class's hash -> its state; None once the class has ended (no key left)."""
    if "key_hash" not in fields:
        return None
    answer = fields.get("answer")
    page = fields.get("page") or PLAYGROUND
    return ClassState(
        code=code, version=int(fields.get("version") or 0), page=page,
        params=dict(parse_qsl(fields.get("params") or "")),
        step=int(fields.get("step") or STEP.default),
        question=int(fields.get("question") or 0) or None,
        revealed=fields.get("revealed") == "1",
        answer=json.loads(answer) if answer else None,
        deadline=float(fields["deadline"]) if fields.get("deadline") else None,
        opened_at=float(fields["opened_at"]) if fields.get("opened_at") else None,
        challenge=int(fields.get("challenge") or 0) or None,
        shown=int(fields.get("shown") or 0),
        lesson=fields.get("lesson") or "",
    )
