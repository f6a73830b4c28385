"""Class mode: the class follows the teacher's page, and answers before the reveal.

One object owns a class's state: ``Classroom(store)``. Its store speaks the few
Redis commands it uses, so the same code runs over two stores:

- ``MemoryStore`` (stockdemo/class_store.py): one process (``make run``);
- ``redis.Redis``: replicas (``make serve``) sharing one redis-server.

``open_classroom(os.environ.get("STOCKDEMO_REDIS_URL"))`` picks one.

Keys of class CODE; all expire ``ttl_s`` after the class's last activity
(a teacher's action, a join or an answer; a student's poll only keeps their
own presence fresh):

    sd:class:CODE              hash: key_hash, version, page, params, step, question,
                               opened_at, deadline, revealed, answer, seats
    sd:class:CODE:answers:N    hash: seat -> {"a": answer, "s": seconds to answer} (HSETNX: one per seat)
    sd:class:CODE:reveals      hash: lesson step -> the live answer revealed for it
    sd:class:CODE:seats        hash: seat -> its number in the class (1, 2, ...), for the results
    sd:class:CODE:seen         sorted set: seat -> time of its last poll
    sd:class:CODE:following    sorted set: seat -> time of its last poll while following
    sd:tries:WHO               count of wrong class codes, for TRIES_WINDOW_S
    sd:replicas                hash: server process -> {"n": class tabs it holds, "at": when said}
                               (stockdemo.replicas; for all classes, expires with them)
    sd:replicas:held           hash: server process -> "1" while make serve holds it out of
                               its balancer (deploy/serve.py); the roll leaves it out

Only the teacher steers: every teacher action takes the secret key handed out
by ``start``, compared in constant time with the SHA-256 kept in the store (a
copy of the store gives no keys away). Students are random seat tokens, and
the results name them by number only; nothing personal is stored.

No peeking: the live answer is computed on the teacher's side and written here
only by ``reveal``; ``poll`` hands it out only once ``revealed`` is set.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import math
import re
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from stockdemo.class_store import MemoryStore
from stockdemo.config import (
    CLASS_ALPHABET,
    CLASS_CODE_LEN,
    CLASS_KEY,
    COUNTDOWN,
    LAB_TAB,
    PAGE_KNOBS,
    PRESENT,
    SEAT_KEY,
    STEP,
    VIEW,
    RunConfig,
    parse_class_code,
    parse_seat,
    show_class_code,
    url_value,
)

CLASS_TTL_S = 4 * 3600  # a class left alone for 4 hours is deleted
PRESENCE_S = 5.0  # a seat not heard from for this long no longer counts as connected
REPLICA_TTL_S = 6.0  # a server process not heard from for this long has gone (stockdemo.replicas)
REPLICAS_KEY = "sd:replicas"
REPLICAS_HELD_KEY = "sd:replicas:held"  # deploy/serve.py: replicas held out of its balancer
TRIES_PER_SEAT = 5  # wrong codes one browser tab may try per window...
TRIES_PER_SERVER = 300  # ...and all of them together: a new tab per try gains nothing
TRIES_WINDOW_S = 60
MAX_ANSWER_LEN = 32
MAX_REVEAL_LEN = 2000
# An answer sent in the last moment of a countdown is still on its way when the
# countdown ends on screen: it counts if it arrives within this long after.
LOCK_GRACE_S = 0.5
PLAYGROUND = "pages/playground.py"
LESSON = "pages/lesson.py"

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


@dataclass(frozen=True)
class Question:
    """How a lesson question is answered: a whole number within bounds, or one of the choices.

    ``tolerance``: how far a number may be from the live answer and still count as right.
    """

    kind: str  # "number" or "choice"
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    tolerance: int = 0

    def parse(self, raw: object) -> tuple[str | None, str | None]:
        """Untrusted answer -> (canonical text or None, message or None). Never raises."""
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            return None, "An answer is a number or one of the choices."
        text = str(raw).strip()
        if not text:
            return None, "The answer is empty."
        if len(text) > MAX_ANSWER_LEN:
            return None, "That answer is too long."
        if self.kind == "choice":
            if text in self.choices:
                return text, None
            return None, f"Pick one of: {', '.join(self.choices)}."
        try:
            number = float(text)
        except ValueError:
            return None, f"{text!r} is not a number."
        if not math.isfinite(number) or number != round(number):
            return None, f"{text!r} is not a whole number."
        if not self.low <= number <= self.high:
            return None, f"Answer with a whole number from {self.low} to {self.high}."
        return str(int(number)), None

    def correct(self, live_value: str) -> str | None:
        """The answer (as ``parse`` gives it) that a live answer's value stands for, if any.

        "+4" -> "4"; "1,234× smaller" -> "smaller"; "No: the baseline wins" -> "No".
        """
        if self.kind == "number":
            found = re.search(r"[+-]?\d[\d,]*", live_value)
            return None if found is None else self.parse(found.group().replace(",", ""))[0]
        text = live_value.strip().lower()
        for choice in self.choices:
            if text.startswith(choice.lower()) or choice.lower() in text.split():
                return choice
        return None

    def is_right(self, answer: str, right: str | None) -> bool | None:
        """Whether an answer counts as right against the live one; None if there is none yet.

        Exact for a choice; within ``tolerance`` for a number.
        """
        if right is None:
            return None
        if self.kind == "choice":
            return answer == right
        try:
            return abs(int(answer) - int(right)) <= self.tolerance
        except ValueError:
            return False

    @property
    def rule(self) -> str:
        """How answers are marked, in words for the teacher's screen."""
        if self.kind == "choice":
            return "the choice the live run gives"
        if not self.tolerance:
            return "exactly the live run's number"
        return f"within ±{self.tolerance} of the live run's number"


# Lesson step (stockdemo/lesson.py STEPS) -> how the class answers its question.
# tests/test_classroom.py checks each live answer lands on one of these.
# Counts of nodes, blocks and graphs are exact facts of the run: only the right
# number is right (tolerance 0). Choices are exact by their nature.
QUESTIONS: dict[int, Question] = {
    1: Question("choice", choices=("AddmmBackward0", "TanhBackward0", "MmBackward0",
                                   "SumBackward0")),
    2: Question("choice", choices=("(10, 1)", "(10, 5, 1)", "(1, 10)", "(10, 5, 10)")),
    3: Question("number", 0, 200),
    4: Question("number", 0, 100),
    5: Question("number", 0, 2000),
    6: Question("number", 0, 10),
    7: Question("choice", choices=("smaller", "bigger", "about the same")),
    8: Question("choice", choices=("Yes", "No")),
    9: Question("choice", choices=("Yes", "No")),
}


def followed_knobs(page: str) -> tuple:
    """What a following student takes from the teacher on ``page``: the controls it binds
    to its link, and on the Lab the open experiment. Presenter mode stays each tab's own."""
    knobs = tuple(k for k in PAGE_KNOBS.get(page, ()) if k is not PRESENT)
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


@dataclass(frozen=True)
class ResultRow:
    """One answer, as the teacher's CSV holds it. ``seat`` is a number, never the token."""

    question: int
    seat: int
    answer: str
    correct: bool | None  # None: not revealed yet
    seconds: float

    CSV_HEADER = ("question", "seat", "answer", "correct", "seconds_to_answer")

    def csv_row(self) -> tuple[object, ...]:
        correct = "" if self.correct is None else ("yes" if self.correct else "no")
        return self.question, self.seat, self.answer, correct, f"{self.seconds:.1f}"


@dataclass(frozen=True)
class QuestionSummary:
    """One question's results: how many answered, how many were right, how fast."""

    question: int
    answers: int
    live: str | None  # the live answer revealed, if it was
    right: int | None  # None: not revealed yet
    median_s: float | None
    rule: str

    @property
    def share_right(self) -> float | None:
        return None if self.right is None or not self.answers else self.right / self.answers


def results_csv(rows: Iterable[ResultRow]) -> str:
    """The class's answers as CSV text: question, seat, answer, correct, seconds to answer."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ResultRow.CSV_HEADER)
    writer.writerows(row.csv_row() for row in rows)
    return out.getvalue()


def summarise(rows: Iterable[ResultRow], reveals: Mapping[int, str]) -> list[QuestionSummary]:
    """Rows -> one summary per question that has answers, in lesson order."""
    by_question: dict[int, list[ResultRow]] = {}
    for row in rows:
        by_question.setdefault(row.question, []).append(row)
    out = []
    for step in sorted(by_question):
        mine = by_question[step]
        revealed = step in reveals
        out.append(QuestionSummary(
            question=step, answers=len(mine), live=reveals.get(step),
            right=sum(bool(r.correct) for r in mine) if revealed else None,
            median_s=statistics.median(r.seconds for r in mine), rule=QUESTIONS[step].rule))
    return out


class Classroom:
    """Class state over a store: start, join, follow, answer, reveal, results, end."""

    def __init__(self, store: MemoryStore | redis.Redis, ttl_s: float = CLASS_TTL_S,
                 presence_s: float = PRESENCE_S) -> None:
        self.db = store
        self.ttl_s = int(math.ceil(ttl_s))
        self.presence_s = presence_s

    @property
    def shared(self) -> bool:
        """True when replicas share this class state (Redis)."""
        return not isinstance(self.db, MemoryStore)

    # -- keys ---------------------------------------------------------------

    @staticmethod
    def _main(code: str) -> str:
        return f"sd:class:{code}"

    def _keys(self, code: str) -> list[str]:
        """Every key a class may own: answers for each lesson step, reveals, seats, presence."""
        main = self._main(code)
        return [main, f"{main}:seen", f"{main}:following", f"{main}:reveals", f"{main}:seats",
                *(f"{main}:answers:{n}" for n in range(STEP.low, STEP.high + 1))]

    def _touch(self, pipe, code: str) -> None:
        for key in self._keys(code):
            pipe.expire(key, self.ttl_s)

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        try:
            yield
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            raise ClassUnavailable(UNAVAILABLE) from exc

    # -- teacher --------------------------------------------------------------

    def start(self) -> Teacher:
        """A new class with a fresh code and secret key."""
        key = secrets.token_urlsafe(24)
        with self._reachable():
            for _ in range(8):
                code = "".join(secrets.choice(CLASS_ALPHABET) for _ in range(CLASS_CODE_LEN))
                if self.db.hsetnx(self._main(code), "key_hash", _digest(key)):
                    pipe = self.db.pipeline()
                    pipe.hset(self._main(code), mapping={
                        "version": 1, "page": PLAYGROUND, "params": "", "step": STEP.default,
                        "question": 0, "revealed": 0, "answer": "", "deadline": "",
                        "opened_at": "", "seats": 0})
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
        with self._reachable():
            fields = self.db.hgetall(self._main(code))
        if "key_hash" not in fields:
            raise ClassError(ENDED)
        given = _digest(key if isinstance(key, str) and len(key) <= 128 else "")
        if not hmac.compare_digest(fields["key_hash"].encode(), given.encode()):
            raise ClassError(NOT_TEACHER)
        return fields

    def _update(self, teacher: Teacher, fields: Mapping[str, object],
                extra: Iterable[tuple[str, str, str]] = ()) -> int:
        """Write fields (and ``extra`` (hash, key, value) entries) and bump the version in
        one transaction -> the new version."""
        extra = list(extra)
        self._authorise(teacher)
        with self._reachable():
            pipe = self.db.pipeline()
            pipe.hset(self._main(teacher.code), mapping=dict(fields))
            for name, key, value in extra:
                pipe.hset(name, key, value)
            pipe.hincrby(self._main(teacher.code), "version", 1)
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
        now = time.time()
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
                            extra=[(f"{self._main(teacher.code)}:reveals", str(step), answer)])

    def end(self, teacher: Teacher) -> None:
        """Delete the class and everything it stored."""
        self._authorise(teacher)
        with self._reachable():
            self.db.delete(*self._keys(teacher.code))

    def distribution(self, teacher: Teacher, step: object) -> dict[str, int]:
        """Answer -> how many students gave it, for one lesson step."""
        self._authorise(teacher)
        number, _ = STEP.parse(step)
        with self._reachable():
            values = self.db.hvals(f"{self._main(teacher.code)}:answers:{number}")
        return dict(Counter(_record(v)[0] for v in values))

    def presence(self, teacher: Teacher) -> tuple[int, int]:
        """(connected, following): seats heard from in the last ``presence_s`` seconds."""
        self._authorise(teacher)
        return self._presence(teacher.code)

    def _presence(self, code: str) -> tuple[int, int]:
        since = time.time() - self.presence_s
        main = self._main(code)
        with self._reachable():
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
        with self._reachable():
            answered = self.db.hlen(f"{self._main(teacher.code)}:answers:{number}")
        return int(answered), self._presence(teacher.code)[0]

    def results(self, teacher: Teacher) -> tuple[list[ResultRow], dict[int, str]]:
        """Every answer of the class, marked against the live answers revealed
        -> (rows by question and seat, {step: live answer value})."""
        self._authorise(teacher)
        main = self._main(teacher.code)
        steps = range(STEP.low, STEP.high + 1)
        with self._reachable():
            pipe = self.db.pipeline(transaction=False)
            pipe.hgetall(f"{main}:seats")
            pipe.hgetall(f"{main}:reveals")
            for step in steps:
                pipe.hgetall(f"{main}:answers:{step}")
            seats, reveals, *answers = pipe.execute()
        live = {int(step): json.loads(text)["value"] for step, text in reveals.items()}
        rows = []
        for step, given in zip(steps, answers, strict=True):
            question = QUESTIONS[step]
            right = question.correct(live[step]) if step in live else None
            for seat, record in given.items():
                value, seconds = _record(record)
                rows.append(ResultRow(step, int(seats.get(seat) or 0), value,
                                      question.is_right(value, right) if step in live else None,
                                      seconds))
        rows.sort(key=lambda r: (r.question, r.seat))
        return rows, live

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
        buckets = ((f"sd:tries:{seat}", TRIES_PER_SEAT), ("sd:tries:all", TRIES_PER_SERVER))
        with self._reachable():
            pipe = self.db.pipeline()
            for name, _ in buckets:
                pipe.get(name)
            for (name, limit), count in zip(buckets, pipe.execute(), strict=True):
                if int(count or 0) >= limit:
                    wait = max(1, int(self.db.ttl(name)))
                    raise ClassRateLimited(f"Too many wrong codes: wait {wait} s and try again.")
            if self.db.hexists(self._main(code), "key_hash"):
                pipe = self.db.pipeline()
                self._touch(pipe, code)
                pipe.execute()
                if seat != "none":
                    self.seat_number(code, seat)
                return code
            pipe = self.db.pipeline()
            for name, _ in buckets:
                pipe.incr(name)
                pipe.expire(name, TRIES_WINDOW_S, nx=True)
            pipe.execute()
        raise ClassError(f"No class has the code {show_class_code(code)} (it may have ended): "
                         "check the code on the teacher's screen.")

    def seat_number(self, code: str, seat: str) -> int:
        """This seat's number in the class: 1 for the first to join, and so on. Kept for good."""
        main = self._main(code)
        with self._reachable():
            number = self.db.hget(f"{main}:seats", seat)
            if number is None:
                candidate = self.db.hincrby(main, "seats", 1)
                self.db.hsetnx(f"{main}:seats", seat, candidate)
                number = self.db.hget(f"{main}:seats", seat)  # another replica may have won
        return int(number or 0)

    def poll(self, code: str, seat: str | None, following: bool) -> ClassState | None:
        """A member's look at the class, and their heartbeat, in one round trip.

        None when the class has ended or expired. The live answer is in it only
        once the teacher has revealed it.
        """
        main = self._main(code)
        seat = parse_seat(seat)
        with self._reachable():
            pipe = self.db.pipeline(transaction=False)  # a read and a heartbeat: no MULTI needed
            pipe.hgetall(main)
            if seat is not None:
                now = time.time()
                pipe.zadd(f"{main}:seen", {seat: now})
                if following:
                    pipe.zadd(f"{main}:following", {seat: now})
                else:
                    pipe.zrem(f"{main}:following", seat)
                pipe.expire(f"{main}:seen", self.ttl_s)
                pipe.expire(f"{main}:following", self.ttl_s)
            fields = pipe.execute()[0]
        return _state(code, fields)

    def heartbeat(self, present: Mapping[str, Iterable[tuple[str, bool]]]) -> None:
        """Seats a server holds connected, per class: {code: [(seat, following)]}, in one
        round trip. What a student's poll does for one seat, for all of them at once."""
        now = time.time()
        with self._reachable():
            pipe = self.db.pipeline(transaction=False)
            for code, seats in present.items():
                main = self._main(code)
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

    def replica_beat(self, replica: str, tabs: int) -> dict[str, int]:
        """Server process ``replica`` holds ``tabs`` class tabs -> every live process's count.

        Each process says so every few seconds (``stockdemo.replicas``); one not heard from
        for REPLICA_TTL_S has gone (killed, or scaled away) and is dropped from the roll.
        One held out of its balancer (``deploy/serve.py``) is left out: no tab can reach it.
        """
        now = time.time()
        with self._reachable():
            pipe = self.db.pipeline(transaction=False)
            pipe.hset(REPLICAS_KEY, replica, json.dumps({"n": int(tabs), "at": now}))
            pipe.expire(REPLICAS_KEY, self.ttl_s)
            pipe.hgetall(REPLICAS_KEY)
            pipe.hgetall(REPLICAS_HELD_KEY)
            said, held = pipe.execute()[-2:]
            live: dict[str, int] = {}
            gone = []
            for name, text in said.items():
                if name in held:
                    continue
                try:
                    record = json.loads(text)
                    n, at = int(record["n"]), float(record["at"])
                except (ValueError, KeyError, TypeError):
                    n, at = 0, 0.0
                if now - at <= REPLICA_TTL_S:
                    live[name] = n
                else:
                    gone.append(name)
            if gone:
                self.db.hdel(REPLICAS_KEY, *gone)
        return live

    def versions(self, codes: Iterable[str]) -> dict[str, tuple[int, tuple[str, ...]]]:
        """Each class's version, and what its class bar shows, in one round trip.

        -> {code: (version, (page, step, question, revealed, locked))}; (0, ()) once a
        class has ended. What a server process watches to tell its students the moment
        the teacher acts: any new version reruns a student's live part, a new bar (a
        new page, question or reveal, or a countdown that ran out) reruns the class bar.
        """
        now = time.time()
        return {code: version_of(state, now) for code, state in self.states(codes).items()}

    def states(self, codes: Iterable[str]) -> dict[str, ClassState | None]:
        """Each class's state as a student may see it (None: ended), in one round trip."""
        codes = list(codes)
        with self._reachable():
            pipe = self.db.pipeline(transaction=False)
            for code in codes:
                pipe.hgetall(self._main(code))
            values = pipe.execute()
        return {code: _state(code, fields) for code, fields in zip(codes, values, strict=True)}

    def answer(self, code: str, seat: object, raw: object) -> str:
        """A student's answer to the open question -> the answer as counted.

        Refused, with a message: no seat, no open question, revealed already, the
        countdown ran out, a value of the wrong kind or out of bounds, or a second answer.
        """
        if parse_seat(seat) is None:
            raise ClassError("This tab has no seat in the class: join again.")
        main = self._main(code)
        with self._reachable():
            fields = self.db.hgetall(main)
        state = _state(code, fields)
        if state is None:
            raise ClassError(ENDED)
        if state.question is None:
            raise ClassError("No question is open.")
        if state.revealed:
            raise ClassError("The answer has been revealed: answers are closed.")
        now = time.time()
        if state.deadline is not None and now > state.deadline + LOCK_GRACE_S:
            raise ClassError(LOCKED)
        value, message = QUESTIONS[state.question].parse(raw)
        if value is None:
            raise ClassError(message)
        seconds = max(0.0, now - (state.opened_at or now))
        record = json.dumps({"a": value, "s": round(seconds, 2)})
        self.seat_number(code, seat)
        with self._reachable():
            pipe = self.db.pipeline()
            pipe.hsetnx(f"{main}:answers:{state.question}", seat, record)
            self._touch(pipe, code)
            added = pipe.execute()[0]
        if not added:
            raise ClassError("You have already answered this question; your first answer counts.")
        return value

    def revealed_answer(self, code: str, step: int) -> dict[str, str] | None:
        """The live answer the teacher revealed for a lesson step (label, value, detail), if any."""
        with self._reachable():
            text = self.db.hget(f"{self._main(code)}:reveals", str(step))
        return None if text is None else json.loads(text)

    def my_answer(self, code: str, seat: object, step: int) -> str | None:
        """What this seat answered to a lesson step, if anything."""
        seat = parse_seat(seat)
        if seat is None:
            return None
        with self._reachable():
            record = self.db.hget(f"{self._main(code)}:answers:{step}", seat)
        return None if record is None else _record(record)[0]


def version_of(state: ClassState | None, now: float) -> tuple[int, tuple[str, ...]]:
    """(version, what the class bar shows: page, step, question, revealed, locked); (0, ()) ended."""
    if state is None:
        return 0, ()
    return state.version, (state.page, str(state.step), str(state.question or ""),
                           str(int(state.revealed)), str(int(state.locked(now))))


def _state(code: str, fields: Mapping[str, str]) -> ClassState | None:
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
    )


def _record(text: str) -> tuple[str, float]:
    """A stored answer -> (answer, seconds to answer)."""
    try:
        record = json.loads(text)
        return str(record["a"]), float(record["s"])
    except (ValueError, KeyError, TypeError):
        return text, 0.0  # written by hand or by an older version: the bare answer


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_seat() -> str:
    """A student's random seat token: identifies one browser tab, says nothing about who."""
    return secrets.token_urlsafe(16)


def open_classroom(redis_url: str | None) -> Classroom:
    """``redis://host:port/db`` -> a Classroom shared through Redis; None or "" -> in memory.

    Nothing is connected here: each command takes a pooled connection and a
    dead one is dropped, so when Redis comes back the next command reconnects.
    One retry covers a connection that died while Redis restarted; short
    timeouts keep a page from hanging while Redis is down.
    """
    if not redis_url:
        return Classroom(MemoryStore())
    client = redis.Redis.from_url(redis_url, decode_responses=True, socket_timeout=0.5,
                                  socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 1))
    return Classroom(client)


__all__ = ["CLASS_TTL_S", "ENDED", "LOCKED", "NOT_TEACHER", "QUESTIONS", "UNAVAILABLE", "ClassError",
           "ClassRateLimited", "ClassState", "ClassUnavailable", "Classroom", "MemoryStore",
           "Question", "QuestionSummary", "ResultRow", "Teacher", "followed_knobs",
           "new_seat", "open_classroom", "page_params", "results_csv", "summarise"]
