"""Checks composed from graph facts with all, any and not; a student's run judged by one.

A check is a table: a fact (``{fact = "op", op = "Add", after = "recurrent", data = true}``),
or ``{all = [...]}``, ``{any = [...]}``, ``{not = {...}}`` over others. ``parse_check`` reads
one (from a lesson's TOML, or Python data for the built-in challenges), bounded in depth and
size, and raises only ``FactError`` naming the key inside the table. Its sentence follows
from its facts' sentences.

    check = parse_check({"all": [{"fact": "path", "step": -1},
                                 {"not": {"fact": "path", "step": 0}}]})
    verdict = check.verdict(source, run_code, first=student_run)   # never raises
    verdict.passes, verdict.sentence, verdict.reason, verdict.runs

The check is handed the function that runs code (``stockdemo.sandbox.run_code`` in the
app, anything with its signature in a test), so checking never decides where code runs.
``first``: the run the student already made, not made again. ``runs`` counts the runs the
check made besides it: facts about change run variants (``rerun``), each at most once; a
``reference_shape`` fact runs the reference answer once per process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from threading import Lock

from stockdemo.i18n import N_, Message, later
from stockdemo.i18n.deferred import Sentences, later_sentences
from stockdemo.lessons import facts as F
from stockdemo.lessons.facts import WHOLE_NUMBER, FactError, Outcome, op_names
from stockdemo.lessons.record import Structure
from stockdemo.lessons.rerun import ChangesWithData, Grows, PrintsEveryStep, stopped
from stockdemo.lessons.shape import shape_key
from stockdemo.sandbox.protocol import CodeRun

Runner = Callable[[str], CodeRun]  # source -> its run: stockdemo.sandbox.run_code
MAX_DEPTH = 4  # all / any / not inside one another
MAX_FACTS = 16  # facts in one check
MAX_PARTS = 8  # facts or checks in one all / any
MAX_REFERENCES = 64  # reference answers whose graph key is kept

COMPOSED: dict[str, str] = {  # the sentences a composition makes of its parts' (whole sentences)
    "any": N_("At least one of these: {parts}"),
    "not all": N_("Not all of these: {parts}"),
    "none": N_("None of these: {parts}"),
    "could not read": N_("The check could not read this run ({error})."),
}

_REFERENCE_KEYS: dict[str, str] = {}  # reference answer -> its graph's key: the same for everyone
_REFERENCE_LOCK = Lock()


@dataclass(frozen=True)
class Verdict:
    """A check's answer for one student's code."""

    passes: bool
    sentence: Message | Sentences | str  # what the check asks: said in the student's language where shown
    reason: Message | Sentences | str = ""  # why it fails ("" when it passes), said likewise
    runs: int = 0  # how many runs the check made (the student's own, if given, not counted)


class Context:
    """One verdict's reading of a run: its graph, and the runs of variants it needed."""

    def __init__(self, source: str, run: Runner, own: CodeRun, reference: str | None) -> None:
        self.source, self.own, self.reference = source, own, reference
        self._run = run
        self._made: dict[str, CodeRun] = {}

    @property
    def runs(self) -> int:
        return len(self._made)

    @cached_property
    def graph(self) -> Structure:
        return Structure(self.own.graph)

    @cached_property
    def key(self) -> str:
        return shape_key(self.own.graph)

    def again(self, source: str) -> CodeRun:
        """``source`` run once for this verdict."""
        if source not in self._made:
            self._made[source] = self._run(source)
        return self._made[source]

    def reference_key(self) -> str:
        with _REFERENCE_LOCK:
            known = _REFERENCE_KEYS.get(self.reference)
        if known is None:
            ran = self.again(self.reference)
            if why := stopped(ran, "reference"):
                raise RuntimeError(why)
            known = shape_key(ran.graph)
            with _REFERENCE_LOCK:
                if len(_REFERENCE_KEYS) >= MAX_REFERENCES:
                    _REFERENCE_KEYS.clear()
                _REFERENCE_KEYS[self.reference] = known
        return known


@dataclass(frozen=True)
class All:
    parts: tuple
    key = "all"

    def sentence(self, holds: bool = True) -> Message | Sentences:
        parts = later_sentences(*(p.sentence() for p in self.parts))
        template = COMPOSED["not all"]  # a name: a literal inside later() would be taken for a msgid
        return parts if holds else later(template, parts=parts)

    def judge(self, ask: Context) -> Outcome:
        for part in self.parts:
            outcome = part.judge(ask)
            if not outcome.holds:
                return outcome
        return Outcome(True, self.sentence())


@dataclass(frozen=True)
class Any:
    parts: tuple
    key = "any"

    def sentence(self, holds: bool = True) -> Message:
        parts = later_sentences(*(p.sentence() for p in self.parts))
        template = COMPOSED["any" if holds else "none"]
        return later(template, parts=parts)

    def judge(self, ask: Context) -> Outcome:
        for part in self.parts:
            if part.judge(ask).holds:
                return Outcome(True, self.sentence())
        return Outcome(False, self.sentence(False))


@dataclass(frozen=True)
class Not:
    part: object
    key = "not"

    def sentence(self, holds: bool = True) -> Message | Sentences:
        return self.part.sentence(not holds)

    def judge(self, ask: Context) -> Outcome:
        outcome = self.part.judge(ask)
        return Outcome(not outcome.holds, outcome.found if outcome.holds else self.sentence())


@dataclass(frozen=True)
class Check:
    """A composed check, with the sentence a student reads and the reference answer it may need."""

    test: object  # a fact, All, Any or Not
    reference: str | None = field(default=None, compare=False)

    @property
    def sentence(self) -> Message | Sentences:
        return self.test.sentence()

    @property
    def runs_again(self) -> bool:
        """Whether a verdict may run the code again (a fact about change)."""
        return any(f.runs_again for f in leaves(self.test))

    def verdict(self, source: str, run: Runner, first: CodeRun | None = None) -> Verdict:
        """Run ``source`` (or take ``first``, its run already made) and judge it. Never raises."""
        made = 0
        try:
            own = first
            if own is None:
                own, made = run(source), 1
            ask = Context(source, run, own, self.reference)
            reason = stopped(own)
            if not reason:
                outcome = self.test.judge(ask)
                reason = "" if outcome.holds else outcome.found
            made += ask.runs
        except Exception as err:  # noqa: BLE001 - a run the check cannot read fails; it never stops a class
            template = COMPOSED["could not read"]
            reason = later(template, error=type(err).__name__)
        return Verdict(not reason, self.sentence, reason, made)


def leaves(test: object) -> list:
    """The facts of a check, in order."""
    if isinstance(test, (All, Any)):
        return [f for p in test.parts for f in leaves(p)]
    if isinstance(test, Not):
        return leaves(test.part)
    return [test]


# --- reading a check's table ------------------------------------------------------------

def _int(table: Mapping, key: str, at: str, low: int, high: int, default: int | None = None) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FactError(f"{at}{key}", "expected-whole-number", WHOLE_NUMBER(low, high))
    return value


def _known(table: Mapping, at: str, allowed: set[str]) -> None:
    for key in table:
        if key not in allowed:
            takes = ", ".join(sorted(allowed))
            raise FactError(f"{at}{key}", "unknown-key",
                            later("unknown key; this fact takes {keys}", keys=takes))


def _op_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact", "op", "after", "data"})
    after = t.get("after")
    if after is not None and after != F.RECURRENT:
        after_names = op_names(after, f"{at}after")
    else:
        after_names = frozenset()
    data = t.get("data", False)
    if not isinstance(data, bool):
        raise FactError(f"{at}data", "expected-bool", later("expected true or false"))
    return F.Op(t.get("op"), op_names(t.get("op"), f"{at}op"), after, after_names, data)


def _count_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact", "op", "equals", "at_least", "at_most"})
    hows = [h for h in ("equals", "at_least", "at_most") if h in t]
    if len(hows) != 1:
        raise FactError(f"{at}fact", "count-how", later("a count takes one of {keys}",
                                                        keys="equals, at_least, at_most"))
    return F.Count(t.get("op"), op_names(t.get("op"), f"{at}op"), hows[0],
                   _int(t, hows[0], at, 0, F.MAX_COUNT))


def _path_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact", "step"})
    return F.Path(_int(t, "step", at, -F.MAX_STEP, F.MAX_STEP))


def _bare(fact: type) -> Callable[[Mapping, str, str | None], F.Fact]:
    def read(t: Mapping, at: str, reference: str | None) -> F.Fact:
        _known(t, at, {"fact"})
        return fact()
    return read


def _weighs_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact", "op"})
    op = t.get("op", "SoftmaxBackward0")
    return F.WeighsSteps(op, op_names(op, f"{at}op"))


def _shape_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact", "shape"})
    shape = t.get("shape")
    if not isinstance(shape, list) or len(shape) > F.MAX_SHAPE_DIMS or not all(
            isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= 2**31 for d in shape):
        raise FactError(f"{at}shape", "expected-shape",
                        later("expected a list of at most {most} sizes, such as "
                                                            "{example}", most=F.MAX_SHAPE_DIMS,
                                                              example="[10, 1]"))
    return F.OutputShape(tuple(shape))


def _reference_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact"})
    if reference is None:
        raise FactError(f"{at}fact", "needs-reference", later("{fact} needs the challenge's reference answer",
                                                            fact="reference_shape"))
    return F.ReferenceShape()


def _grows_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact", "op"})
    op = t.get("op")
    return Grows(op, op_names(op, f"{at}op") if op is not None else frozenset())


def _changes_fact(t: Mapping, at: str, reference: str | None) -> F.Fact:
    _known(t, at, {"fact", "what"})
    what = t.get("what", "graph")
    names = frozenset() if what in ("graph", "steps") else op_names(what, f"{at}what")
    return ChangesWithData(what, names)


FACTS: dict[str, Callable[[Mapping, str, str | None], F.Fact]] = {
    "draws": _bare(F.Draws), "op": _op_fact, "count": _count_fact, "path": _path_fact,
    "one_step_at_a_time": _bare(F.OneStepAtATime), "weighs_steps": _weighs_fact,
    "output_shape": _shape_fact, "reference_shape": _reference_fact, "grows": _grows_fact,
    "changes_with_data": _changes_fact, "prints_every_step": _bare(PrintsEveryStep),
}


def parse_check(table: object, reference: str | None = None) -> Check:
    """A check's table -> Check. Raises FactError (its ``key`` relative to the table)."""
    count = [0]
    return Check(_parse(table, "", 0, count, reference), reference)


def _parse(table: object, at: str, depth: int, count: list[int], reference: str | None):
    if not isinstance(table, Mapping):
        raise FactError(at.rstrip(".") or "check", "expected-table",
                        later("expected a table: a fact, or {joins}", joins="all, any, not"))
    if depth > MAX_DEPTH:
        raise FactError(at.rstrip(".") or "check", "too-deep",
                        later("{joins} nest at most {most} deep", joins="all, any, not", most=MAX_DEPTH))
    joins = [k for k in ("all", "any", "not") if k in table]
    if joins:
        if len(table) != 1:
            key = next(k for k in table if k != joins[0])
            raise FactError(f"{at}{key}", "join-alone", later("a table with {join} holds nothing else",
                                                              join=joins[0]))
        join = joins[0]
        if join == "not":
            return Not(_parse(table["not"], f"{at}not.", depth + 1, count, reference))
        parts = table[join]
        if not isinstance(parts, list) or not 1 <= len(parts) <= MAX_PARTS:
            raise FactError(f"{at}{join}", "expected-parts",
                            later("expected a list of 1 to {most} facts or checks", most=MAX_PARTS))
        made = tuple(_parse(p, f"{at}{join}[{i}].", depth + 1, count, reference) for i, p in enumerate(parts))
        return All(made) if join == "all" else Any(made)
    name = table.get("fact")
    if not isinstance(name, str) or name not in FACTS:
        raise FactError(f"{at}fact", "expected-fact", later("expected a fact: one of {facts}, or {joins}",
                                                          facts=", ".join(FACTS), joins="all, any, not"))
    count[0] += 1
    if count[0] > MAX_FACTS:
        raise FactError(f"{at}fact", "too-many-facts", later("a check holds at most {most} facts",
                                                             most=MAX_FACTS))
    return FACTS[name](table, at, reference)
