"""The class protocol: ``Classroom``, every action of a teacher or a student, over a store.

The teacher starts a class, takes it from page to page, opens a question (with a
countdown, if set), reveals the live answer and reads the results; students join
with the code, poll (their look at the class and their heartbeat in one round
trip) and answer. ``open_classroom(os.environ.get("STOCKDEMO_REDIS_URL"))`` picks the
store: in memory for one process, Redis for replicas (stockdemo/classroom/store.py).

A module per part, each a part of ``Classroom``:

- here: starting and ending a class, the teacher's page, joining, polling, presence;
- ``room``: the store, the class's lifetime, who may act (``Room``);
- ``answers``: a lesson question opened, answered, revealed, counted (``Answers``);
- ``challenge_runs``: a challenge asked, students' runs, the gallery (``ChallengeRuns``).

Only the teacher steers: every teacher action takes the secret key handed out by
``start`` (stockdemo/classroom/codes.py). No peeking: the live answer is computed on
the teacher's side and written here only by ``reveal``; ``poll`` hands it out only
once ``revealed`` is set. Each class expires ``ttl_s`` after its last activity (a
teacher's action, a join or an answer; a student's poll only keeps their own
presence fresh).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlencode

from stockdemo.classroom.answers import Answers
from stockdemo.classroom.challenge_runs import ChallengeRuns
from stockdemo.classroom.codes import (
    count_wrong_code,
    digest,
    new_code,
    new_key,
    refuse_guessing,
    seat_number,
)
from stockdemo.classroom.errors import ClassError
from stockdemo.classroom.room import CLASS_TTL_S, PRESENCE_S
from stockdemo.classroom.state import (
    LESSON,
    PLAYGROUND,
    ClassState,
    Teacher,
    page_params,
    state_from_fields,
    version_of,
)
from stockdemo.classroom.store import class_key, class_keys, connect, reachable
from stockdemo.config import PAGE_KNOBS, STEP, parse_class_code, parse_seat, show_class_code
from stockdemo.i18n import N_, later
from stockdemo.lessons import Lesson, builtin_lesson
from stockdemo.lessons.schema import MAX_BYTES

__all__ = ["CLASS_TTL_S", "PRESENCE_S", "Classroom", "open_classroom"]


class Classroom(Answers, ChallengeRuns):
    """Class state over a store: start, join, follow, answer, reveal, results, end."""

    # -- teacher --------------------------------------------------------------

    def start(self, lesson: Lesson | None = None) -> Teacher:
        """A new class with a fresh code and secret key, teaching ``lesson`` (None: ours).

        A lesson of the teacher's own is kept with the class, as its text (parsed already:
        ``lessons.parse_lesson`` bounds it), and goes when the class does.
        """
        own = lesson is not None and lesson.digest != builtin_lesson().digest
        if own and len(lesson.text.encode()) > MAX_BYTES:
            raise ClassError(N_("That lesson is too long to keep with a class."))
        key = new_key()
        with reachable():
            for _ in range(8):
                code = new_code()
                if self.db.hsetnx(class_key(code), "key_hash", digest(key)):
                    pipe = self.db.pipeline()
                    pipe.hset(class_key(code), mapping={
                        "version": 1, "page": PLAYGROUND, "params": "", "step": STEP.default,
                        "question": 0, "revealed": 0, "answer": "", "deadline": "",
                        "opened_at": "", "seats": 0, "challenge": 0, "shown": 0,
                        "lesson": lesson.digest if own else ""})
                    if own:
                        pipe.hset(f"{class_key(code)}:lesson", "text", lesson.text)
                    self._touch(pipe, code)
                    pipe.execute()
                    return Teacher(code, key)
        raise ClassError(N_("No free class code was found; try again."))

    def go_to(self, teacher: Teacher, page: object, params: Mapping[str, object]) -> int:
        """The teacher's page and its settings -> the class's new version.

        ``page`` must be one of the app's pages; settings are checked by its knobs.
        """
        if not isinstance(page, str) or page not in PAGE_KNOBS:
            raise ClassError(N_("That is not a page of this app."))
        fields: dict[str, object] = {"page": page, "params": urlencode(page_params(page, params))}
        if page == LESSON:
            fields["step"], _ = STEP.parse(params.get(STEP.name))
        return self._update(teacher, fields)

    def move(self, teacher: Teacher, settings: Mapping[str, object]) -> int:
        """The teacher's Playground settings (query parameters) -> the class's new version."""
        return self.go_to(teacher, PLAYGROUND, settings)

    def go_to_step(self, teacher: Teacher, step: object) -> int:
        """The teacher on the Lesson, at ``step``."""
        number, _ = STEP.parse(step)
        return self.go_to(teacher, LESSON, {STEP.name: str(number)})

    def end(self, teacher: Teacher) -> None:
        """Delete the class and everything it stored."""
        self._authorise(teacher)
        with reachable():
            self.db.delete(*class_keys(teacher.code))

    def presence(self, teacher: Teacher) -> tuple[int, int]:
        """(connected, following): seats heard from in the last ``presence_s`` seconds."""
        self._authorise(teacher)
        return self._presence(teacher.code)

    # -- students -------------------------------------------------------------

    def join(self, raw_code: object, seat: object) -> str:
        """Untrusted class code -> the code of a running class; refused with a message otherwise.

        A malformed code is refused at once with what is wrong with it, and costs no
        try. Wrong well-formed codes are counted per seat and for the whole server:
        past TRIES_PER_SEAT (or TRIES_PER_SERVER) in TRIES_WINDOW_S, every try is
        refused until the window ends, so codes cannot be found by trying.
        """
        code, message = parse_class_code(raw_code)
        if code is None:
            raise ClassError(message or N_("Type the class code from the teacher's screen."))
        seat = parse_seat(seat) or "none"
        with reachable():
            refuse_guessing(self.db, seat)
            if self.db.hexists(class_key(code), "key_hash"):
                pipe = self.db.pipeline()
                self._touch(pipe, code)
                pipe.execute()
                if seat != "none":
                    seat_number(self.db, code, seat)
                return code
            count_wrong_code(self.db, seat)
        raise ClassError(later("No class has the code {code} (it may have ended): check the code on the "
                               "teacher's screen.", code=show_class_code(code)))

    def poll(self, code: str, seat: str | None, following: bool) -> ClassState | None:
        """A member's look at the class, and their heartbeat, in one round trip.

        None when the class has ended or expired. The live answer is in it only
        once the teacher has revealed it.
        """
        main = class_key(code)
        seat = parse_seat(seat)
        with reachable():
            pipe = self.db.pipeline(transaction=False)  # a read and a heartbeat: no MULTI needed
            pipe.hgetall(main)
            if seat is not None:
                now = self.clock()
                pipe.zadd(f"{main}:seen", {seat: now})
                if following:
                    pipe.zadd(f"{main}:following", {seat: now})
                else:
                    pipe.zrem(f"{main}:following", seat)
                pipe.expire(f"{main}:seen", self.ttl_s)
                pipe.expire(f"{main}:following", self.ttl_s)
            fields = pipe.execute()[0]
        return state_from_fields(code, fields)

    def heartbeat(self, present: Mapping[str, Iterable[tuple[str, bool]]]) -> None:
        """Seats a server holds connected, per class: {code: [(seat, following)]}, in one
        round trip. What a student's poll does for one seat, for all of them at once."""
        now = self.clock()
        with reachable():
            pipe = self.db.pipeline(transaction=False)
            for code, seats in present.items():
                main = class_key(code)
                seats = [(s, f) for s, f in seats if parse_seat(s) is not None]
                if not seats:
                    continue
                pipe.zadd(f"{main}:seen", {seat: now for seat, _ in seats})
                if following := {seat: now for seat, on in seats if on}:
                    pipe.zadd(f"{main}:following", following)
                for seat in (seat for seat, on in seats if not on):
                    pipe.zrem(f"{main}:following", seat)
                pipe.expire(f"{main}:seen", self.ttl_s)
                pipe.expire(f"{main}:following", self.ttl_s)
            pipe.execute()

    def versions(self, codes: Iterable[str]) -> dict[str, tuple[int, tuple[str, ...]]]:
        """Each class's version, and what its class bar shows, in one round trip.

        -> {code: (version, (page, step, question, revealed, locked))}; (0, ()) once a
        class has ended. What a server process watches to tell its students the moment
        the teacher acts: any new version reruns a student's live part, a new bar (a
        new page, question or reveal, or a countdown that ran out) reruns the class bar.
        """
        now = self.clock()
        return {code: version_of(state, now) for code, state in self.states(codes).items()}

    def states(self, codes: Iterable[str]) -> dict[str, ClassState | None]:
        """Each class's state as a student may see it (None: ended), in one round trip."""
        codes = list(codes)
        with reachable():
            pipe = self.db.pipeline(transaction=False)
            for code in codes:
                pipe.hgetall(class_key(code))
            values = pipe.execute()
        return {code: state_from_fields(code, fields) for code, fields in zip(codes, values, strict=True)}


def open_classroom(redis_url: str | None) -> Classroom:
    """``redis://host:port/db`` -> a Classroom shared through Redis; None or "" -> in memory."""
    return Classroom(connect(redis_url))
