"""What every class action stands on: the store, the class's lifetime, and who may act.

``Room`` holds the store (stockdemo/classroom/store.py) and the class's time to live; its
teacher actions go through ``_authorise`` (the secret key handed out by ``start``,
stockdemo/classroom/codes.py) and ``_update`` (fields written and the version bumped in
one transaction), its students' through ``_seated``. ``Classroom``
(stockdemo/classroom/protocol.py) is a Room with every action on it. ``lesson`` is the
lesson a class teaches, kept parsed by its digest.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping

from stockdemo.classroom.codes import holds_key
from stockdemo.classroom.errors import ENDED, NOT_TEACHER, ClassError
from stockdemo.classroom.state import ClassState, Teacher, state_from_fields
from stockdemo.classroom.store import MemoryStore, Store, class_key, class_keys, reachable
from stockdemo.config import parse_class_code, parse_seat
from stockdemo.i18n import N_, later
from stockdemo.lessons import Lesson, LessonError, builtin_lesson, parse_lesson

KEPT_LESSONS = 16  # classes' lessons a server process keeps parsed (a few kB to 100 kB each)

CLASS_TTL_S = 4 * 3600  # a class left alone for 4 hours is deleted
PRESENCE_S = 5.0  # a seat not heard from for this long no longer counts as connected


class Room:
    """A class store with its lifetime and clock: what each part of the protocol acts on."""

    def __init__(self, store: Store, ttl_s: float = CLASS_TTL_S,
                 presence_s: float = PRESENCE_S, clock: Callable[[], float] = time.time) -> None:
        self.db = store
        self.ttl_s = int(math.ceil(ttl_s))
        self.presence_s = presence_s
        self.clock = clock  # wall-clock seconds: countdowns, presence; tests pass one they move
        self._lessons: dict[str, Lesson] = {}  # digest -> a class's lesson parsed, oldest first
        self._lessons_lock = threading.Lock()

    @property
    def shared(self) -> bool:
        """True when replicas share this class state (Redis)."""
        return not isinstance(self.db, MemoryStore)

    def _touch(self, pipe, code: str) -> None:
        for key in class_keys(code):
            pipe.expire(key, self.ttl_s)

    def _authorise(self, teacher: Teacher) -> dict[str, str]:
        """The class's fields, if ``teacher`` holds its key; refused otherwise."""
        code = getattr(teacher, "code", None)
        key = getattr(teacher, "key", None)
        if not isinstance(code, str) or parse_class_code(code)[0] != code:
            raise ClassError(NOT_TEACHER)
        with reachable():
            fields = self.db.hgetall(class_key(code))
        if "key_hash" not in fields:
            raise ClassError(ENDED)
        if not holds_key(fields["key_hash"], key):
            raise ClassError(NOT_TEACHER)
        return fields

    def _update(self, teacher: Teacher, fields: Mapping[str, object],
                extra: Iterable[tuple[str, str, str]] = ()) -> int:
        """Write fields (and ``extra`` (hash, key, value) entries) and bump the version in
        one transaction -> the new version."""
        extra = list(extra)
        self._authorise(teacher)
        with reachable():
            pipe = self.db.pipeline()
            pipe.hset(class_key(teacher.code), mapping=dict(fields))
            for name, key, value in extra:
                pipe.hset(name, key, value)
            pipe.hincrby(class_key(teacher.code), "version", 1)
            self._touch(pipe, teacher.code)
            return int(pipe.execute()[1 + len(extra)])

    def _seated(self, code: str, seat: object) -> tuple[str, ClassState]:
        """(the class's key, its state) for a student's action; refused without a seat, or once
        the class has ended."""
        if parse_seat(seat) is None:
            raise ClassError(N_("This tab has no seat in the class: join again."))
        main = class_key(code)
        with reachable():
            fields = self.db.hgetall(main)
        state = state_from_fields(code, fields)
        if state is None:
            raise ClassError(ENDED)
        return main, state

    def _presence(self, code: str) -> tuple[int, int]:
        since = self.clock() - self.presence_s
        main = class_key(code)
        with reachable():
            pipe = self.db.pipeline()
            for name in (f"{main}:seen", f"{main}:following"):
                pipe.zremrangebyscore(name, 0, since)
                pipe.zcard(name)
            counts = pipe.execute()
        return int(counts[1]), int(counts[3])

    def lesson(self, code: str, digest: str) -> Lesson:
        """The lesson class ``code`` teaches (``ClassState.lesson``: its digest, "" for ours),
        parsed once per process and kept by digest."""
        if not digest:
            return builtin_lesson()
        with self._lessons_lock:
            kept = self._lessons.get(digest)
        if kept is not None:
            return kept
        with reachable():
            text = self.db.hget(f"{class_key(code)}:lesson", "text")
        if text is None:
            raise ClassError(ENDED)
        try:
            lesson = parse_lesson(text)
        except LessonError as err:  # written by another version of the app
            raise ClassError(later("The class's lesson cannot be read here: {error}",
                                   error=str(err))) from err
        with self._lessons_lock:
            self._lessons[digest] = lesson
            while len(self._lessons) > KEPT_LESSONS:
                self._lessons.pop(next(iter(self._lessons)))
        return lesson
