"""A challenge as the class answers it: each student's latest run, grouped by what it built.

The teacher asks a challenge (a ready-made edit's, or a prompt of their own); each
student's run comes in as a ``Submission`` (the code, the check's verdict, the graph's
shape key, the error if any), one per seat, the latest kept. ``gallery`` groups them by
shape key (two students who detached on different lines built one graph: one group),
largest first; errors are grouped by the error itself (``Failure``: its kind, Python's or
torch's type and message as they wrote it), never by a sentence in someone's language. The
verdict's words are kept as Messages (``stockdemo.i18n.stored``), said in each reader's
language when shown. The teacher's side alone reads them
(``Classroom.gallery``); a student reads only their own and the one the teacher shows.

Stored (stockdemo/classroom/store.py): ``sd:class:CODE:challenges`` (number -> the
challenge), ``sd:class:CODE:runs:N`` (seat -> its latest submission) and
``sd:class:CODE:shown`` (the run shown to the class, without its seat).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace

from stockdemo.i18n import Message, tr
from stockdemo.i18n.stored import bounded, from_data, to_data

MAX_CODE = 20_000  # the sandbox's own default length limit (sandbox/limits.py code_chars)
MAX_TEXT = 500  # a verdict's sentence, an error's message, a prompt
MAX_KEY = 200  # a shape key, a challenge id, a title


def _text(value: object, limit: int) -> str:
    return str(value if value is not None else "")[:limit]


@dataclass(frozen=True)
class Asked:
    """A challenge as the class holds it: which one (a ready-made edit's id, or "prompt"),
    its words, the code students start from, when it was asked (time.time())."""

    number: int
    id: str
    title: str
    prompt: str
    start: str
    asked_at: float

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Asked:
        data = json.loads(text)
        return cls(int(data["number"]), _text(data["id"], MAX_KEY), _text(data["title"], MAX_KEY),
                   _text(data["prompt"], MAX_TEXT), _text(data["start"], MAX_CODE),
                   float(data["asked_at"]))


@dataclass(frozen=True)
class Failure:
    """How a run ended without a graph, as what raised or stopped it named it (the sandbox's
    ``CodeError``): the gallery groups runs by ``key``, whatever language their students read."""

    kind: str  # the sandbox's: "error", "limit", "refused", "crash", "unavailable"; "none": ran, drew nothing
    type: str = ""  # Python's or torch's exception class
    message: str = ""  # as torch or Python wrote it (the sandbox's English for a limit)
    limit: str | None = None
    line: int | None = None  # where, in the student's code: not part of the group

    @property
    def key(self) -> tuple[str, str | None, str, str]:
        return self.kind, self.limit, self.type, self.message

    @classmethod
    def from_data(cls, data: object) -> Failure | None:
        """Stored data -> Failure; None for a run without an error. Never raises."""
        if not data:
            return None
        if not isinstance(data, dict):  # written by an older version: its message alone
            return cls("error", "", _text(data, MAX_TEXT))
        line = data.get("line")
        return cls(_text(data.get("kind"), MAX_KEY), _text(data.get("type"), MAX_KEY),
                   _text(data.get("message"), MAX_TEXT), data.get("limit") and _text(data["limit"], MAX_KEY),
                   line if isinstance(line, int) and not isinstance(line, bool) else None)


NO_GRAPH = Failure("none")  # a run that ended well and recorded no graph


@dataclass(frozen=True)
class Submission:
    """A student's latest run for a challenge. ``seat`` is the seat's number in the class,
    never its token (0 where no seat may be named: a run shown to the class)."""

    seat: int
    code: str
    passes: bool
    sentence: Message | str  # what the check asks: kept as a Message, said in each reader's language
    shape: str  # the graph's shape key ("" when the run built no graph)
    error: Failure | None  # how it failed (None when it ran)
    at: float  # when it came in (time.time())
    runs: int = 1  # runs this seat sent for the challenge
    first_pass: float | None = None  # when its first passing run came in
    reason: Message | str = ""  # why it fails ("" when it passes): its verdict again after a reload

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "sentence": to_data(self.sentence), "reason": to_data(self.reason),
                           "error": None if self.error is None else asdict(self.error)})

    @classmethod
    def from_json(cls, text: str, seat: int = 0) -> Submission | None:
        """A stored submission -> Submission, with ``seat``; None if it cannot be read."""
        try:
            data = json.loads(text)
            return cls(seat, _text(data["code"], MAX_CODE), bool(data["passes"]),
                       bounded(from_data(data["sentence"]), MAX_TEXT), _text(data["shape"], MAX_KEY),
                       Failure.from_data(data["error"]), float(data["at"]), int(data.get("runs", 1)),
                       None if data.get("first_pass") is None else float(data["first_pass"]),
                       bounded(from_data(data.get("reason")), MAX_TEXT))
        except (ValueError, KeyError, TypeError):
            return None

    @property
    def built(self) -> bool:
        """The run built a graph (shape_key gives "none" for a run that built none)."""
        return bool(self.shape) and self.shape != "none"

    def anonymous(self) -> Submission:
        """The same run without its seat: what the class sees when the teacher shows it."""
        return replace(self, seat=0)


@dataclass(frozen=True)
class Group:
    """Runs that built the same graph (one shape key)."""

    shape: str
    runs: tuple[Submission, ...]  # earliest first: runs[0] is the group's representative

    @property
    def key(self) -> str:
        """The tile's key: its shape and verdict (one graph can pass a check over two runs
        for one program and fail it for another)."""
        return f"{self.shape}|{int(self.passes)}"

    @property
    def count(self) -> int:
        return len(self.runs)

    @property
    def passes(self) -> bool:
        return self.runs[0].passes

    @property
    def verdict(self) -> str:
        """"2 · passes": the tile's headline, in the language spoken now."""
        if self.passes:
            return tr("{n} · passes", n=self.count)
        return tr("{n} · fails", n=self.count)

    @property
    def seats(self) -> tuple[int, ...]:
        return tuple(sorted(r.seat for r in self.runs))


@dataclass(frozen=True)
class Gallery:
    """A challenge's runs as the teacher's screen shows them."""

    challenge: Asked
    groups: tuple[Group, ...]  # by size, largest first; runs that built no graph are not here
    errors: tuple[tuple[Failure, int], ...]  # (an error, how many ended with it), most frequent first
    waiting: tuple[int, ...]  # connected seats that have sent no run yet
    submissions: tuple[Submission, ...] = field(default=())

    @property
    def count(self) -> int:
        return len(self.submissions)

    @property
    def passing(self) -> int:
        return sum(s.passes for s in self.submissions)

    @property
    def share_passing(self) -> float | None:
        return None if not self.submissions else self.passing / len(self.submissions)

    @property
    def first_pass_s(self) -> float | None:
        """Seconds from the question to the class's first passing run; None before one."""
        firsts = [s.first_pass for s in self.submissions if s.first_pass is not None]
        return None if not firsts else max(0.0, min(firsts) - self.challenge.asked_at)

    def group(self, key: str) -> Group | None:
        """The tile of this key (``Group.key``); a bare shape key names its first tile."""
        return next((g for g in self.groups if key in (g.key, g.shape)), None)


def gallery(challenge: Asked, submissions: Iterable[Submission],
            connected: Iterable[int] = ()) -> Gallery:
    """Each seat's latest run -> the gallery: groups by shape, errors by the error, who waits."""
    runs = sorted(submissions, key=lambda s: (s.at, s.seat))
    by_shape: dict[str, list[Submission]] = {}
    for run in runs:
        if run.built:
            # The verdict is part of the key: a check over two runs may pass one
            # program and fail another that built the same graph once.
            by_shape.setdefault(f"{run.shape}|{int(run.passes)}", []).append(run)
    groups = sorted((Group(key.rsplit("|", 1)[0], tuple(members)) for key, members in by_shape.items()),
                    key=lambda g: (-g.count, not g.passes, g.runs[0].at))
    failed = [r.error or NO_GRAPH for r in runs if not r.built]
    counts = Counter(f.key for f in failed)
    first = {}
    for failure in failed:  # each error shown as its first run met it (its line)
        first.setdefault(failure.key, failure)
    sent = {r.seat for r in runs}
    return Gallery(challenge, tuple(groups), tuple((first[k], n) for k, n in counts.most_common()),
                   tuple(sorted(set(connected) - sent)), tuple(runs))


@dataclass(frozen=True)
class ChallengeRow:
    """One student's challenge, as the teacher's CSV holds it."""

    challenge: int
    seat: int
    code: str
    passes: bool
    runs: int
    seconds_to_pass: float | None

    def csv_row(self) -> tuple[object, ...]:
        """In the class CSV's columns: question, seat, answer, correct, seconds, runs."""
        seconds = "" if self.seconds_to_pass is None else f"{self.seconds_to_pass:.1f}"
        return (f"challenge {self.challenge}", self.seat, self.code, "yes" if self.passes else "no",
                seconds, self.runs)


def challenge_rows(challenges: Mapping[int, Asked],
                   runs: Mapping[int, Iterable[Submission]]) -> list[ChallengeRow]:
    """Every seat's final run of every challenge -> rows by challenge and seat."""
    rows = []
    for number, submissions in runs.items():
        challenge = challenges.get(number)
        if challenge is None:
            continue
        for s in submissions:
            rows.append(ChallengeRow(number, s.seat, s.code, s.passes, s.runs,
                                     None if s.first_pass is None
                                     else max(0.0, s.first_pass - challenge.asked_at)))
    rows.sort(key=lambda r: (r.challenge, r.seat))
    return rows
