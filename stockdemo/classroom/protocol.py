"""The class protocol: ``Classroom``, every action of a teacher or a student, over a store.

The teacher starts a class, takes it from page to page, opens a question (with a
countdown, if set), reveals the live answer and reads the results; students join
with the code, poll (their look at the class and their heartbeat in one round
trip) and answer. ``open_classroom(os.environ.get("STOCKDEMO_REDIS_URL"))`` picks the
store: in memory for one process, Redis for replicas (stockdemo/classroom/store.py).

Only the teacher steers: every teacher action takes the secret key handed out by
``start`` (stockdemo/classroom/codes.py). No peeking: the live answer is computed on
the teacher's side and written here only by ``reveal``; ``poll`` hands it out only
once ``revealed`` is set. Each class expires ``ttl_s`` after its last activity (a
teacher's action, a join or an answer; a student's poll only keeps their own
presence fresh).
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlencode

from stockdemo.classroom.codes import (
    count_wrong_code,
    digest,
    holds_key,
    new_code,
    new_key,
    refuse_guessing,
    seat_number,
)
from stockdemo.classroom.errors import ENDED, LOCKED, NOT_TEACHER, ClassError
from stockdemo.classroom.gallery import (
    MAX_CODE,
    MAX_KEY,
    MAX_TEXT,
    Asked,
    ChallengeRow,
    Gallery,
    Submission,
    challenge_rows,
    gallery,
)
from stockdemo.classroom.questions import QUESTIONS
from stockdemo.classroom.results import ResultRow, answer_record, read_answer, read_results
from stockdemo.classroom.state import (
    LESSON,
    PLAYGROUND,
    ClassState,
    Teacher,
    page_params,
    state_from_fields,
    version_of,
)
from stockdemo.classroom.store import (
    MAX_CHALLENGES,
    MemoryStore,
    Store,
    class_key,
    class_keys,
    connect,
    reachable,
)
from stockdemo.config import COUNTDOWN, PAGE_KNOBS, STEP, parse_class_code, parse_seat, show_class_code

CLASS_TTL_S = 4 * 3600  # a class left alone for 4 hours is deleted
PRESENCE_S = 5.0  # a seat not heard from for this long no longer counts as connected
MAX_REVEAL_LEN = 2000
# An answer sent in the last moment of a countdown is still on its way when the
# countdown ends on screen: it counts if it arrives within this long after.
LOCK_GRACE_S = 0.5


class Classroom:
    """Class state over a store: start, join, follow, answer, reveal, results, end."""

    def __init__(self, store: Store, ttl_s: float = CLASS_TTL_S,
                 presence_s: float = PRESENCE_S, clock: Callable[[], float] = time.time) -> None:
        self.db = store
        self.ttl_s = int(math.ceil(ttl_s))
        self.presence_s = presence_s
        self.clock = clock  # wall-clock seconds: countdowns, presence; tests pass one they move

    @property
    def shared(self) -> bool:
        """True when replicas share this class state (Redis)."""
        return not isinstance(self.db, MemoryStore)

    def _touch(self, pipe, code: str) -> None:
        for key in class_keys(code):
            pipe.expire(key, self.ttl_s)

    # -- teacher --------------------------------------------------------------

    def start(self) -> Teacher:
        """A new class with a fresh code and secret key."""
        key = new_key()
        with reachable():
            for _ in range(8):
                code = new_code()
                if self.db.hsetnx(class_key(code), "key_hash", digest(key)):
                    pipe = self.db.pipeline()
                    pipe.hset(class_key(code), mapping={
                        "version": 1, "page": PLAYGROUND, "params": "", "step": STEP.default,
                        "question": 0, "revealed": 0, "answer": "", "deadline": "",
                        "opened_at": "", "seats": 0, "challenge": 0, "shown": 0})
                    self._touch(pipe, code)
                    pipe.execute()
                    return Teacher(code, key)
        raise ClassError("No free class code was found; try again.")

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

    def go_to(self, teacher: Teacher, page: object, params: Mapping[str, object]) -> int:
        """The teacher's page and its settings -> the class's new version.

        ``page`` must be one of the app's pages; settings are checked by its knobs.
        """
        if not isinstance(page, str) or page not in PAGE_KNOBS:
            raise ClassError("That is not a page of this app.")
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

    def open_question(self, teacher: Teacher, step: object, countdown_s: object = 0) -> int:
        """Open the question of a lesson step, with a countdown that locks answers (0: none).

        Answers given to it before are kept; a reopened question takes new ones until its lock.
        """
        number, _ = STEP.parse(step)
        seconds, _ = COUNTDOWN.parse(countdown_s)
        now = self.clock()
        return self._update(teacher, {"question": number, "revealed": 0, "answer": "",
                                      "opened_at": repr(now),
                                      "deadline": repr(now + seconds) if seconds else ""})

    def reveal(self, teacher: Teacher, label: str, value: str, detail: str) -> int:
        """Close the open question, whatever the count, and show every student the live answer."""
        fields = self._authorise(teacher)
        step = int(fields.get("question") or 0)
        if not step:
            raise ClassError("No question is open.")
        answer = json.dumps({name: str(text)[:MAX_REVEAL_LEN]
                             for name, text in (("label", label), ("value", value),
                                                ("detail", detail))})
        return self._update(teacher, {"revealed": 1, "answer": answer},
                            extra=[(f"{class_key(teacher.code)}:reveals", str(step), answer)])

    def end(self, teacher: Teacher) -> None:
        """Delete the class and everything it stored."""
        self._authorise(teacher)
        with reachable():
            self.db.delete(*class_keys(teacher.code))

    def distribution(self, teacher: Teacher, step: object) -> dict[str, int]:
        """Answer -> how many students gave it, for one lesson step."""
        self._authorise(teacher)
        number, _ = STEP.parse(step)
        with reachable():
            values = self.db.hvals(f"{class_key(teacher.code)}:answers:{number}")
        return dict(Counter(read_answer(v)[0] for v in values))

    def presence(self, teacher: Teacher) -> tuple[int, int]:
        """(connected, following): seats heard from in the last ``presence_s`` seconds."""
        self._authorise(teacher)
        return self._presence(teacher.code)

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

    def tally(self, teacher: Teacher, step: object) -> tuple[int, int]:
        """(answered, connected) for one lesson step: the live count on the teacher's screen."""
        self._authorise(teacher)
        number, _ = STEP.parse(step)
        with reachable():
            answered = self.db.hlen(f"{class_key(teacher.code)}:answers:{number}")
        return int(answered), self._presence(teacher.code)[0]

    def results(self, teacher: Teacher) -> tuple[list[ResultRow], dict[int, str]]:
        """Every answer of the class, marked against the live answers revealed
        -> (rows by question and seat, {step: live answer value})."""
        self._authorise(teacher)
        with reachable():
            return read_results(self.db, teacher.code)

    # -- challenges: the teacher's side (stockdemo/classroom/gallery.py) --------

    def ask(self, teacher: Teacher, challenge_id: str, title: str, prompt: str, start: str) -> int:
        """Ask the class a challenge (a ready-made edit's id, or "prompt"), starting from the
        code ``start`` -> its number. Students' runs for it are taken until the next one."""
        self._authorise(teacher)
        main = class_key(teacher.code)
        with reachable():
            number = int(self.db.hlen(f"{main}:challenges")) + 1
        if number > MAX_CHALLENGES:
            raise ClassError(f"A class asks at most {MAX_CHALLENGES} challenges: start a new class.")
        if not isinstance(start, str) or len(start) > MAX_CODE:
            raise ClassError("The starting code is too long.")
        asked = Asked(number, str(challenge_id)[:MAX_KEY], str(title)[:MAX_KEY],
                          str(prompt)[:MAX_TEXT], start, self.clock())
        self._update(teacher, {"challenge": number, "shown": 0},
                     extra=[(f"{main}:challenges", str(number), asked.to_json())])
        return number

    def close_challenge(self, teacher: Teacher) -> int:
        """No challenge open: students' editors follow the teacher again. Runs are kept."""
        return self._update(teacher, {"challenge": 0, "shown": 0})

    def gallery(self, teacher: Teacher, number: int | None = None) -> Gallery | None:
        """Challenge ``number``'s runs (the open one by default), grouped, with who has not
        run yet, in one round trip; None when no challenge has been asked."""
        fields = self._authorise(teacher)
        number = number or int(fields.get("challenge") or 0)
        if not number:
            return None
        main = class_key(teacher.code)
        with reachable():
            pipe = self.db.pipeline(transaction=False)
            pipe.hget(f"{main}:challenges", str(number))
            pipe.hgetall(f"{main}:runs:{number}")
            pipe.hgetall(f"{main}:seats")
            pipe.zrangebyscore(f"{main}:seen", self.clock() - self.presence_s, "+inf")
            asked, runs, seats, connected = pipe.execute()
        if asked is None:
            return None
        submissions = [s for seat, text in runs.items()
                       if (s := Submission.from_json(text, int(seats.get(seat) or 0))) is not None]
        return gallery(Asked.from_json(asked), submissions,
                       [int(seats[s]) for s in connected if s in seats])

    def show(self, teacher: Teacher, shape: str | None) -> int:
        """Show the class the first run of the open challenge's tile ``shape`` (its
        ``Group.key``, or a shape key), without its seat; None hides it. -> the class's new
        version."""
        fields = self._authorise(teacher)
        main = class_key(teacher.code)
        if shape is None:
            return self._update(teacher, {"shown": 0})
        found = self.gallery(teacher)
        group = None if found is None else found.group(shape)
        if group is None:
            raise ClassError("No run of the open challenge has that graph.")
        return self._update(teacher, {"shown": int(fields.get("shown") or 0) + 1},
                            extra=[(f"{main}:shown", "run", group.runs[0].anonymous().to_json())])

    def challenge_results(self, teacher: Teacher) -> list[ChallengeRow]:
        """Every seat's final run of every challenge asked, by challenge and seat."""
        self._authorise(teacher)
        main = class_key(teacher.code)
        with reachable():
            asked = self.db.hgetall(f"{main}:challenges")
            pipe = self.db.pipeline(transaction=False)
            pipe.hgetall(f"{main}:seats")
            for number in asked:
                pipe.hgetall(f"{main}:runs:{number}")
            seats, *runs = pipe.execute()
        challenges = {int(n): Asked.from_json(text) for n, text in asked.items()}
        return challenge_rows(challenges, {
            int(n): [s for seat, text in given.items()
                     if (s := Submission.from_json(text, int(seats.get(seat) or 0))) is not None]
            for n, given in zip(asked, runs, strict=True)})

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
            raise ClassError(message or "Type the class code from the teacher's screen.")
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
        raise ClassError(f"No class has the code {show_class_code(code)} (it may have ended): "
                         "check the code on the teacher's screen.")

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

    def _seated(self, code: str, seat: object) -> tuple[str, ClassState]:
        """(the class's key, its state) for a student's action; refused without a seat, or once
        the class has ended."""
        if parse_seat(seat) is None:
            raise ClassError("This tab has no seat in the class: join again.")
        main = class_key(code)
        with reachable():
            fields = self.db.hgetall(main)
        state = state_from_fields(code, fields)
        if state is None:
            raise ClassError(ENDED)
        return main, state

    def answer(self, code: str, seat: object, raw: object) -> str:
        """A student's answer to the open question -> the answer as counted.

        Refused, with a message: no seat, no open question, revealed already, the
        countdown ran out, a value of the wrong kind or out of bounds, or a second answer.
        """
        main, state = self._seated(code, seat)
        if state.question is None:
            raise ClassError("No question is open.")
        if state.revealed:
            raise ClassError("The answer has been revealed: answers are closed.")
        now = self.clock()
        if state.deadline is not None and now > state.deadline + LOCK_GRACE_S:
            raise ClassError(LOCKED)
        value, message = QUESTIONS[state.question].parse(raw)
        if value is None:
            raise ClassError(message)
        seconds = max(0.0, now - (state.opened_at or now))
        record = answer_record(value, seconds)
        with reachable():
            seat_number(self.db, code, seat)
            pipe = self.db.pipeline()
            pipe.hsetnx(f"{main}:answers:{state.question}", seat, record)
            self._touch(pipe, code)
            added = pipe.execute()[0]
        if not added:
            raise ClassError("You have already answered this question; your first answer counts.")
        return value

    def revealed_answer(self, code: str, step: int) -> dict[str, str] | None:
        """The live answer the teacher revealed for a lesson step (label, value, detail), if any."""
        with reachable():
            text = self.db.hget(f"{class_key(code)}:reveals", str(step))
        return None if text is None else json.loads(text)

    def my_answer(self, code: str, seat: object, step: int) -> str | None:
        """What this seat answered to a lesson step, if anything."""
        seat = parse_seat(seat)
        if seat is None:
            return None
        with reachable():
            record = self.db.hget(f"{class_key(code)}:answers:{step}", seat)
        return None if record is None else read_answer(record)[0]

    # -- challenges: a student's side. Nothing here returns another seat's run, except the
    # one the teacher shows, without its seat.

    def open_challenge(self, code: str) -> Asked | None:
        """The challenge open in the class (its prompt and starting code), if any."""
        with reachable():
            number = self.db.hget(class_key(code), "challenge")
            if not number or number == "0":
                return None
            text = self.db.hget(f"{class_key(code)}:challenges", number)
        return None if text is None else Asked.from_json(text)

    def submit(self, code: str, seat: object, source: object, passes: bool, sentence: str,
               shape: str, error: str) -> Submission:
        """A student's run for the open challenge (its verdict and graph's shape computed by
        the server) -> the submission kept: the latest run per seat, runs counted."""
        main, state = self._seated(code, seat)
        if not isinstance(source, str) or len(source) > MAX_CODE:
            raise ClassError("That code is too long to send to the class.")
        if state.challenge is None:
            raise ClassError("No challenge is open.")
        name = f"{main}:runs:{state.challenge}"
        now = self.clock()
        with reachable():
            number = seat_number(self.db, code, seat)
            before = self.db.hget(name, seat)
            last = None if before is None else Submission.from_json(before, number)
            first_pass = last.first_pass if last is not None else None
            if passes and first_pass is None:
                first_pass = now
            run = Submission(number, source, bool(passes), str(sentence)[:MAX_TEXT],
                             str(shape)[:MAX_KEY], str(error)[:MAX_TEXT], now,
                             1 + (last.runs if last is not None else 0), first_pass)
            pipe = self.db.pipeline()
            pipe.hset(name, seat, run.to_json())
            self._touch(pipe, code)
            pipe.execute()
        return run

    def my_run(self, code: str, seat: object) -> Submission | None:
        """This seat's latest run for the open challenge, if it sent one."""
        seat = parse_seat(seat)
        if seat is None:
            return None
        main = class_key(code)
        with reachable():
            number = self.db.hget(main, "challenge")
            if not number or number == "0":
                return None
            text = self.db.hget(f"{main}:runs:{number}", seat)
        return None if text is None else Submission.from_json(text)

    def shown_run(self, code: str) -> Submission | None:
        """The run the teacher shows the class, without its seat; None while none is shown."""
        main = class_key(code)
        with reachable():
            pipe = self.db.pipeline(transaction=False)
            pipe.hget(main, "shown")
            pipe.hget(f"{main}:shown", "run")
            shown, text = pipe.execute()
        if not shown or shown == "0" or text is None:
            return None
        return Submission.from_json(text)


def open_classroom(redis_url: str | None) -> Classroom:
    """``redis://host:port/db`` -> a Classroom shared through Redis; None or "" -> in memory."""
    return Classroom(connect(redis_url))
