"""Class mode: the class follows the teacher's Playground, and answers before the reveal.

One object owns a class's state: ``Classroom(store)``. Its store speaks the few
Redis commands it uses, so the same code runs over two stores:

- ``MemoryStore``: one process (``make run``), a dict with expiry times;
- ``redis.Redis``: replicas (``make serve``) sharing one redis-server.

``open_classroom(os.environ.get("STOCKDEMO_REDIS_URL"))`` picks one.

Keys of class CODE; all expire ``ttl_s`` after the class's last activity
(a teacher's action, a join or an answer; a student's poll only keeps their
own presence fresh):

    sd:class:CODE              hash: key_hash, version, settings, step, question, revealed, answer
    sd:class:CODE:answers:N    hash: seat -> answer to lesson step N (HSETNX: one per seat)
    sd:class:CODE:seen         sorted set: seat -> time of its last poll
    sd:class:CODE:following    sorted set: seat -> time of its last poll while following
    sd:tries:WHO               count of wrong class codes, for TRIES_WINDOW_S

Only the teacher steers: every teacher action takes the secret key handed out
by ``start``, compared in constant time with the SHA-256 kept in the store (a
copy of the store gives no keys away). Students are random seat tokens;
nothing personal is stored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from stockdemo.config import (
    CLASS_ALPHABET,
    CLASS_CODE_LEN,
    STEP,
    VIEW,
    RunConfig,
    parse_class_code,
    parse_seat,
)

CLASS_TTL_S = 4 * 3600  # a class left alone for 4 hours is deleted
PRESENCE_S = 5.0  # a seat not heard from for this long no longer counts as connected
TRIES_PER_SEAT = 5  # wrong codes one browser tab may try per window...
TRIES_PER_SERVER = 300  # ...and all of them together: a new tab per try gains nothing
TRIES_WINDOW_S = 60
MAX_ANSWER_LEN = 32
MAX_REVEAL_LEN = 2000

UNAVAILABLE = ("Class mode is unavailable: the class server does not answer. "
               "Every page still works on its own.")
ENDED = "This class has ended or expired."
NOT_TEACHER = "Only the teacher of this class can do that."


class ClassError(Exception):
    """A refusal, with a message for the person who asked."""


class ClassUnavailable(ClassError):
    """The shared store (Redis) does not answer."""


@dataclass(frozen=True)
class Question:
    """How a lesson question is answered: a whole number within bounds, or one of the choices."""

    kind: str  # "number" or "choice"
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

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


# Lesson step (stockdemo/lesson.py STEPS) -> how the class answers its question.
# tests/test_classroom.py checks each live answer lands on one of these.
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
    settings: dict[str, str]  # the teacher's Playground as query parameters
    step: int  # the teacher's lesson step
    question: int | None  # lesson step whose question is open, or None
    revealed: bool
    answer: dict[str, str] | None = field(default=None)  # label, value, detail once revealed

    def run_settings(self) -> tuple[RunConfig, str]:
        """The teacher's Playground -> (RunConfig, graph view)."""
        config, _ = RunConfig.from_params(self.settings)
        view, _ = VIEW.parse(self.settings.get(VIEW.name))
        return config, view


class Classroom:
    """Class state over a store: start, join, follow, answer, reveal, end."""

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
        """Every key a class may own: answers for each lesson step, presence."""
        main = self._main(code)
        return [main, f"{main}:seen", f"{main}:following",
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
                        "version": 1, "settings": "", "step": STEP.default, "question": 0,
                        "revealed": 0, "answer": ""})
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

    def _update(self, teacher: Teacher, fields: Mapping[str, object]) -> int:
        """Write fields and bump the version in one transaction -> the new version."""
        self._authorise(teacher)
        with self._reachable():
            pipe = self.db.pipeline()
            pipe.hset(self._main(teacher.code), mapping=dict(fields))
            pipe.hincrby(self._main(teacher.code), "version", 1)
            self._touch(pipe, teacher.code)
            return int(pipe.execute()[1])

    def move(self, teacher: Teacher, settings: Mapping[str, object]) -> int:
        """The teacher's Playground settings (query parameters) -> the class's new version."""
        config, _ = RunConfig.from_params(settings)
        view, _ = VIEW.parse(settings.get(VIEW.name))
        params = config.to_params()
        if view != VIEW.default:
            params[VIEW.name] = view
        return self._update(teacher, {"settings": urlencode(params)})

    def go_to_step(self, teacher: Teacher, step: object) -> int:
        number, _ = STEP.parse(step)
        return self._update(teacher, {"step": number})

    def open_question(self, teacher: Teacher, step: object) -> int:
        """Open the question of a lesson step; answers given to it before are kept."""
        number, _ = STEP.parse(step)
        return self._update(teacher, {"question": number, "revealed": 0, "answer": ""})

    def reveal(self, teacher: Teacher, label: str, value: str, detail: str) -> int:
        """Close the open question and show every student the live answer."""
        fields = self._authorise(teacher)
        if not int(fields.get("question") or 0):
            raise ClassError("No question is open.")
        answer = {name: str(text)[:MAX_REVEAL_LEN]
                  for name, text in (("label", label), ("value", value), ("detail", detail))}
        return self._update(teacher, {"revealed": 1, "answer": json.dumps(answer)})

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
        return dict(Counter(values))

    def presence(self, teacher: Teacher) -> tuple[int, int]:
        """(connected, following): seats heard from in the last ``presence_s`` seconds."""
        self._authorise(teacher)
        since = time.time() - self.presence_s
        main = self._main(teacher.code)
        with self._reachable():
            pipe = self.db.pipeline()
            for name in (f"{main}:seen", f"{main}:following"):
                pipe.zremrangebyscore(name, 0, since)
                pipe.zcard(name)
            counts = pipe.execute()
        return int(counts[1]), int(counts[3])

    # -- students -------------------------------------------------------------

    def join(self, raw_code: object, seat: object) -> str:
        """Untrusted class code -> the code of a running class; refused with a message otherwise.

        Wrong codes are counted per seat and for the whole server: past
        TRIES_PER_SEAT (or TRIES_PER_SERVER) in TRIES_WINDOW_S, every try is
        refused until the window ends, so codes cannot be found by trying.
        """
        seat = parse_seat(seat) or "none"
        buckets = ((f"sd:tries:{seat}", TRIES_PER_SEAT), ("sd:tries:all", TRIES_PER_SERVER))
        with self._reachable():
            pipe = self.db.pipeline()
            for name, _ in buckets:
                pipe.get(name)
            for (name, limit), count in zip(buckets, pipe.execute(), strict=True):
                if int(count or 0) >= limit:
                    wait = max(1, int(self.db.ttl(name)))
                    raise ClassError(f"Too many wrong codes: wait {wait} s and try again.")
            code, message = parse_class_code(raw_code)
            if code is not None and self.db.hexists(self._main(code), "key_hash"):
                pipe = self.db.pipeline()
                self._touch(pipe, code)
                pipe.execute()
                return code
            pipe = self.db.pipeline()
            for name, _ in buckets:
                pipe.incr(name)
                pipe.expire(name, TRIES_WINDOW_S, nx=True)
            pipe.execute()
        raise ClassError(message or "No class has that code (it may have ended): check the code "
                                    "on the teacher's screen.")

    def poll(self, code: str, seat: str | None, following: bool) -> ClassState | None:
        """A member's look at the class, and their heartbeat, in one round trip.

        None when the class has ended or expired.
        """
        main = self._main(code)
        seat = parse_seat(seat)
        with self._reachable():
            pipe = self.db.pipeline()
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
        if "key_hash" not in fields:
            return None
        answer = fields.get("answer")
        return ClassState(
            code=code, version=int(fields.get("version") or 0),
            settings=dict(parse_qsl(fields.get("settings") or "")),
            step=int(fields.get("step") or STEP.default),
            question=int(fields.get("question") or 0) or None,
            revealed=fields.get("revealed") == "1",
            answer=json.loads(answer) if answer else None,
        )

    def versions(self, codes: Iterable[str]) -> dict[str, tuple[int, tuple[str, ...]]]:
        """Each class's version, and what its class bar shows, in one round trip.

        -> {code: (version, (step, question, revealed))}; (0, ()) once a class has ended.
        What a server process watches to tell its students the moment the teacher acts:
        any new version reruns a student's live part, a new bar reruns the class bar.
        """
        codes = list(codes)
        with self._reachable():
            pipe = self.db.pipeline(transaction=False)
            for code in codes:
                pipe.hgetall(self._main(code))
            values = pipe.execute()
        return {code: (int(fields.get("version") or 0),
                       tuple(fields.get(k) or "" for k in ("step", "question", "revealed")))
                if "key_hash" in fields else (0, ())
                for code, fields in zip(codes, values, strict=True)}

    def answer(self, code: str, seat: object, raw: object) -> str:
        """A student's answer to the open question -> the answer as counted.

        Refused, with a message: no seat, no open question, revealed already,
        a value of the wrong kind or out of bounds, or a second answer.
        """
        if parse_seat(seat) is None:
            raise ClassError("This tab has no seat in the class: join again.")
        main = self._main(code)
        with self._reachable():
            fields = self.db.hgetall(main)
        if "key_hash" not in fields:
            raise ClassError(ENDED)
        step = int(fields.get("question") or 0)
        if not step:
            raise ClassError("No question is open.")
        if fields.get("revealed") == "1":
            raise ClassError("The answer has been revealed: answers are closed.")
        value, message = QUESTIONS[step].parse(raw)
        if value is None:
            raise ClassError(message)
        with self._reachable():
            pipe = self.db.pipeline()
            pipe.hsetnx(f"{main}:answers:{step}", seat, value)
            self._touch(pipe, code)
            added = pipe.execute()[0]
        if not added:
            raise ClassError("You have already answered this question; your first answer counts.")
        return value

    def my_answer(self, code: str, seat: object, step: int) -> str | None:
        """What this seat answered to a lesson step, if anything."""
        seat = parse_seat(seat)
        if seat is None:
            return None
        with self._reachable():
            return self.db.hget(f"{self._main(code)}:answers:{step}", seat)


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


class MemoryStore:
    """The Redis commands ``Classroom`` uses, in this process's memory (``make run``).

    Values are kept as strings, as Redis returns them with ``decode_responses``.
    """

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self._expires: dict[str, float] = {}
        self._lock = threading.RLock()
        self._writes = 0

    def _live(self, name: str, make: Callable[[], object] | None = None):
        with self._lock:
            if name in self._expires and self._expires[name] <= time.monotonic():
                self._data.pop(name, None)
                self._expires.pop(name, None)
            if name not in self._data and make is not None:
                self._data[name] = make()
            return self._data.get(name)

    def pipeline(self, transaction: bool = True) -> _MemoryPipeline:
        return _MemoryPipeline(self)

    def get(self, name: str) -> str | None:
        return self._live(name)

    def incr(self, name: str) -> int:
        with self._lock:
            value = int(self._live(name) or 0) + 1
            self._data[name] = str(value)
            return value

    def hget(self, name: str, key: str) -> str | None:
        return (self._live(name) or {}).get(key)

    def hgetall(self, name: str) -> dict[str, str]:
        with self._lock:
            return dict(self._live(name) or {})

    def hexists(self, name: str, key: str) -> bool:
        return key in (self._live(name) or {})

    def hvals(self, name: str) -> list[str]:
        with self._lock:
            return list((self._live(name) or {}).values())

    def hset(self, name: str, mapping: Mapping[str, object]) -> int:
        with self._lock:
            table = self._live(name, dict)
            added = len(set(mapping) - set(table))
            table.update({k: str(v) for k, v in mapping.items()})
            return added

    def hsetnx(self, name: str, key: str, value: object) -> bool:
        with self._lock:
            table = self._live(name, dict)
            if key in table:
                return False
            table[key] = str(value)
            return True

    def hincrby(self, name: str, key: str, amount: int = 1) -> int:
        with self._lock:
            table = self._live(name, dict)
            table[key] = str(int(table.get(key, 0)) + amount)
            return int(table[key])

    def zadd(self, name: str, mapping: Mapping[str, float]) -> int:
        with self._lock:
            scores = self._live(name, dict)
            added = len(set(mapping) - set(scores))
            scores.update(mapping)
            return added

    def zrem(self, name: str, *values: str) -> int:
        with self._lock:
            scores = self._live(name) or {}
            return sum(scores.pop(v, None) is not None for v in values)

    def zremrangebyscore(self, name: str, low: float, high: float) -> int:
        with self._lock:
            scores = self._live(name) or {}
            gone = [m for m, s in scores.items() if low <= s <= high]
            for member in gone:
                del scores[member]
            return len(gone)

    def zcard(self, name: str) -> int:
        return len(self._live(name) or {})

    def expire(self, name: str, seconds: int, nx: bool = False) -> bool:
        with self._lock:
            self._sweep()
            if self._live(name) is None or (nx and name in self._expires):
                return False
            self._expires[name] = time.monotonic() + seconds
            return True

    def _sweep(self) -> None:
        """Now and then drop every expired key: keys nobody reads again (a wrong code's
        counter, an abandoned class) would otherwise stay in memory for good."""
        self._writes += 1
        if self._writes % 1000:
            return
        now = time.monotonic()
        for name in [n for n, at in self._expires.items() if at <= now]:
            self._data.pop(name, None)
            del self._expires[name]

    def ttl(self, name: str) -> int:
        with self._lock:
            if self._live(name) is None:
                return -2
            if name not in self._expires:
                return -1
            return math.ceil(self._expires[name] - time.monotonic())

    def delete(self, *names: str) -> int:
        with self._lock:
            gone = sum(self._live(n) is not None for n in names)
            for name in names:
                self._data.pop(name, None)
                self._expires.pop(name, None)
            return gone


class _MemoryPipeline:
    """Commands queued, then run together under the store's lock (a MULTI/EXEC)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._queued: list[tuple[Callable, tuple, dict]] = []

    def __getattr__(self, name: str) -> Callable[..., _MemoryPipeline]:
        command = getattr(self._store, name)

        def queue(*args, **kwargs) -> _MemoryPipeline:
            self._queued.append((command, args, kwargs))
            return self

        return queue

    def execute(self) -> list:
        with self._store._lock:
            try:
                return [command(*args, **kwargs) for command, args, kwargs in self._queued]
            finally:
                self._queued.clear()
