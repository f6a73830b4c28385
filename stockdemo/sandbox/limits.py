"""Every limit on a learner's run, declared once: default, bounds, words, and the operator's variable.

``Limits`` is what one run may use. Its defaults fit the seed many times
over (the seed: about 40 graph nodes, a few ms of CPU, 600 characters) and
stop a hostile program quickly. An operator overrides any of them with an
environment variable of the server (``STOCKDEMO_CODE_CPU_S=3``...); a value
that is not a number or is out of bounds is refused with a message naming the
variable and its bounds (``Limits.from_env`` raises ``ValueError``, which
``run_code`` turns into a refusal the page shows). ``STOCKDEMO_CODE=off``
turns the feature off.

A limit's words are said in the language spoken where they are made: English in the run's
child and the fork server, whose messages reach the page as English text; ``said`` turns
such a message back into the reader's language, from the limit it names.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from stockdemo.i18n import ENGLISH, N_, later, speaking, tr
from stockdemo.i18n.deferred import later_list

OFF_VARIABLE = "STOCKDEMO_CODE"
# Said in the reader's language where shown; a run turned away holds its English (OFF_MESSAGE).
OFF_WORDS = later("The operator of this server turned running your own code off ({variable}=off). "
                  "Everything else in the app works as usual.", variable=OFF_VARIABLE)
OFF_MESSAGE = OFF_WORDS.english()


@dataclass(frozen=True)
class LimitSpec:
    """One limit: its field, the operator's variable, bounds, and how it reads in words."""

    name: str
    title: str  # the limit's name in words (a msgid): "CPU time"
    variable: str
    low: float
    high: float
    unit: str  # the number's unit: "s", "MB"...
    words: str  # the limit at {value} in words (a msgid), e.g. "{value} s of CPU time"
    integer: bool = True

    def text(self, value: float) -> str:
        """2 -> '2 s of CPU time', in the language spoken now."""
        return tr(self.words, value=int(value) if self.integer or value == int(value) else value)


SPECS: tuple[LimitSpec, ...] = (
    LimitSpec("cpu_s", N_("CPU time"), "STOCKDEMO_CODE_CPU_S", 1, 60, "s", N_("{value} s of CPU time")),
    # Above what the run's process holds when it starts (PyTorch itself, already loaded).
    LimitSpec("memory_mb", N_("memory"), "STOCKDEMO_CODE_MEMORY_MB", 32, 8192, "MB",
              N_("{value} MB of memory beyond PyTorch's own")),
    LimitSpec("wall_s", N_("wall-clock time"), "STOCKDEMO_CODE_WALL_S", 1, 120, "s",
              N_("{value} s of wall-clock time"), integer=False),
    LimitSpec("output_kb", N_("printed text"), "STOCKDEMO_CODE_OUTPUT_KB", 1, 4096, "KB",
              N_("{value} KB of printed text")),
    LimitSpec("file_mb", N_("file size"), "STOCKDEMO_CODE_FILE_MB", 1, 1024, "MB",
              N_("{value} MB in any one file written in the run's own folder")),
    LimitSpec("graph_nodes", N_("graph size"), "STOCKDEMO_CODE_GRAPH_NODES", 100, 200_000, "",
              N_("{value} nodes in the autograd graph")),
    LimitSpec("code_chars", N_("code length"), "STOCKDEMO_CODE_CODE_CHARS", 100, 1_000_000, "",
              N_("{value} characters of code")),
)
SPEC = {s.name: s for s in SPECS}


@dataclass(frozen=True)
class Limits:
    """What one run may use (the defaults); bounds and words are in ``SPECS``, by field name."""

    cpu_s: int = 2
    memory_mb: int = 256
    wall_s: float = 5.0
    output_kb: int = 64
    file_mb: int = 16
    graph_nodes: int = 10_000
    code_chars: int = 20_000

    def __post_init__(self) -> None:
        for spec in SPECS:
            value = getattr(self, spec.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{spec.name} must be a number, got {value!r}")
            if spec.integer and value != int(value):
                raise ValueError(f"{spec.name} must be a whole number, got {value!r}")
            if not spec.low <= value <= spec.high:
                raise ValueError(f"{spec.name} must be within {spec.low:g}..{spec.high:g}, got {value!r}")

    @property
    def output_bytes(self) -> int:
        return self.output_kb * 1024

    def text(self, name: str) -> str:
        """One limit in words: 'cpu_s' -> '2 s of CPU time'."""
        return SPEC[name].text(getattr(self, name))

    def stopped(self, name: str, why: str = "") -> str:
        """The message of a run this limit stopped, in the language spoken now: 'Stopped at the
        CPU time limit (2 s of CPU time).' ``why``: a msgid (said here), or Python's own words."""
        limit, value = tr(SPEC[name].title), self.text(name)
        if why:
            return tr("Stopped at the {limit} limit ({value}): {why}", limit=limit, value=value, why=tr(why))
        return tr("Stopped at the {limit} limit ({value}).", limit=limit, value=value)

    def said(self, name: str, message: str) -> str:
        """``message``, made in English by ``stopped(name, ...)`` (in the run's child or the fork
        server), in the language spoken now. A message ``stopped`` did not make stays as it is."""
        with speaking(ENGLISH):
            head = self.stopped(name)[:-1]  # without its full stop
        if message == head + ".":
            return self.stopped(name)
        if message.startswith(head + ": "):
            return self.stopped(name, message[len(head) + 2:])
        return message

    def words(self) -> str:
        """Every limit in words, for the README and the page: '2 s of CPU time, ...'."""
        return str(later_list(self.text(s.name) for s in SPECS))

    def to_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: object) -> Limits:
        """Plain data -> Limits; ValueError for anything but the known numeric fields."""
        if not isinstance(raw, Mapping) or set(raw) - set(SPEC):
            raise ValueError(f"limits must be a mapping of {sorted(SPEC)}")
        return cls(**{k: v for k, v in raw.items()})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, overridden by the operator's variables. ValueError names a bad one."""
        environ = os.environ if environ is None else environ
        given: dict[str, float] = {}
        for spec in SPECS:
            raw = environ.get(spec.variable)
            if raw is None or not raw.strip():
                continue
            bounds = f"a {'whole ' if spec.integer else ''}number from {spec.low:g} to {spec.high:g}"
            try:
                value = float(raw.strip()[:32])
            except ValueError:
                raise ValueError(f"{spec.variable}={raw[:32]!r} is not a number: give {bounds} "
                                 f"({spec.unit or 'count'}).") from None
            if not math.isfinite(value) or not spec.low <= value <= spec.high or (
                    spec.integer and value != int(value)):
                raise ValueError(f"{spec.variable}={raw[:32]!r} is out of bounds: give {bounds} "
                                 f"({spec.unit or 'count'}).")
            given[spec.name] = int(value) if spec.integer else value
        return cls(**given)


def code_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """False when the operator set ``STOCKDEMO_CODE=off`` (or 0, false, no)."""
    environ = os.environ if environ is None else environ
    return environ.get(OFF_VARIABLE, "on").strip().lower() not in {"off", "0", "false", "no"}


# English words said once here, in every process that imports this (the fork server, before it
# forks): Babel reads its locale data now, since a run's child, walled in, may open no file.
Limits().words()
