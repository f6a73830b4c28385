"""A lesson's TOML text -> ``Lesson``, against a schema: the one place a lesson is read.

The text is untrusted (a file, an upload, a link): it is bounded before it is parsed
(``MAX_BYTES``, UTF-8), parsed by ``tomllib``, bounded again as data (nesting, array
lengths, string lengths), then read key by key against the schema below. Known keys only,
each typed and bounded; a page's settings are checked by the page's own knobs
(``config.PAGE_KNOBS``), a measure's parameters by the measure, a check by
``checks.parse_check``. ``parse_lesson`` raises nothing but ``LessonError``, which names
the line (``lines.KeyLines``) and the key. Nothing in the text runs here.

    format = 1                     # optional
    id = "dynamic-graphs"          # a slug: letters, digits, - and _
    title = "..."
    about = "..."                  # optional, one sentence
    [[steps]]                      # 1 to MAX_STEPS, in order
    id, title, sentence, page, link
    [steps.settings]               # the page's knobs; on Your code: code = "..." or edit = "loop"
    [steps.question]               # text, then choices = { id = "words", ... } or low, high
    [steps.answer]                 # measure, its parameters, label and detail (optional)
    [steps.challenge]              # optional: id, title, prompt, start, answer, check

docs/lesson.md describes each key and each measure and fact.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Mapping

from stockdemo.code.edits import EDITS, apply, seed_source
from stockdemo.code.link import code_to_link
from stockdemo.config import PAGE_KNOBS, STEP, RunConfig, TrainConfig
from stockdemo.i18n import Message, later, tr
from stockdemo.knobs import ChoiceKnob, IntKnob
from stockdemo.lab import LengthsConfig
from stockdemo.lessons import code_answers, experiments  # noqa: F401 - each registers its measures
from stockdemo.lessons.checks import parse_check
from stockdemo.lessons.code_answers import CodeSettings
from stockdemo.lessons.facts import ONE_OF, WHOLE_NUMBER, FactError, op_names
from stockdemo.lessons.lines import KeyLines
from stockdemo.lessons.measures import MAX_TEMPLATE, MEASURES, AnswerSpec, placeholders
from stockdemo.lessons.question import Question
from stockdemo.lessons.steps import Challenge, Lesson, Step
from stockdemo.sandbox.limits import Limits

MAX_BYTES = 64_000  # a lesson's text, in UTF-8
MAX_STEPS = STEP.high  # the Lesson page's ?step= reaches every step
MAX_NESTING = 16  # tables and arrays inside one another
MAX_ARRAY = 64  # items of any array
MAX_CODE = Limits.code_chars  # the sandbox's own bound on code
MAX_CHOICES = 8
MAX_NUMBER = 10**9
NESTED = later("nested deeper than {most} levels", most=MAX_NESTING)
TEXT = {"title": 120, "about": 400, "sentence": 400, "link": 120, "text": 300, "choice": 120, "prompt": 600}
SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
CODE_PAGE = "pages/code.py"
NOT_STEPS = ("pages/lesson.py", "pages/classroom.py")  # a step never links to the lesson or the class

# A step's page by the name a lesson gives it -> its file; each page's settings, by kind.
PAGES: dict[str, str] = {("home" if f == "app.py" else f.removeprefix("pages/").removesuffix(".py")): f
                         for f in PAGE_KNOBS if f not in NOT_STEPS}
SETTINGS: dict[str, type] = {**{f: RunConfig for f in PAGES.values()}, "pages/train.py": TrainConfig,
                             "pages/lab.py": LengthsConfig, CODE_PAGE: CodeSettings}


class LessonError(ValueError):
    """Why a lesson's text was refused: the line (1-based), the key, a stable code for the error
    (``"expected-text"``: what a class store, a log or a test matches) and its sentence, a
    Message said in each reader's language (``said``); ``message`` is its English."""

    def __init__(self, line: int, key: str, code: str, words: Message | str) -> None:
        self.message = words.english() if isinstance(words, Message) else words
        super().__init__(f"line {line}, {key}: {self.message}")
        self.line, self.key, self.code, self.words = line, key, code, words

    def said(self) -> str:
        """"Line 12, steps[2].question.low: ..." in the language spoken now."""
        return tr("Line {line}, {key}: {message}", line=str(self.line), key=self.key, message=self.words)


class _Refused(Exception):
    def __init__(self, key: str, code: str, words: Message | str) -> None:
        super().__init__(code)
        self.key, self.code, self.words = key, code, words


def parse_lesson(text: str | bytes) -> Lesson:
    """A lesson's TOML -> Lesson. Raises LessonError (line, key, message), nothing else."""
    text = _decoded(text)
    data = _toml(text)
    lines = KeyLines(text)
    try:
        _bounded(data, "", 0)
        return _lesson(data, text)
    except _Refused as refused:
        raise LessonError(lines.line_of(refused.key), refused.key, refused.code, refused.words) from None


def _decoded(text: object) -> str:
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    if not isinstance(text, bytes):
        raise LessonError(1, "(text)", "not-text", later("a lesson is text"))
    if len(text) > MAX_BYTES:
        raise LessonError(text[:MAX_BYTES].count(b"\n") + 1, "(text)", "too-long",
                          later("a lesson is at most {most} bytes; this one is {size}", most=MAX_BYTES,
                                size=len(text)))
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = text[:bad.start].count(b"\n") + 1
        raise LessonError(line, _key_on(text.decode("utf-8", "replace"), line), "not-utf8",
                          later("not UTF-8 text (byte {byte})", byte=bad.start + 1)) from None


def _key_on(text: str, line: int) -> str:
    """The key assigned or opened on ``line``, as a path, or "(text)"."""
    found = [f for f in KeyLines(text).found if f.line == line]
    return ".".join(found[0].path) if found else "(text)"


def _toml(text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as bad:
        message = str(bad)
        at = re.search(r"\(at line (\d+), column \d+\)", message)
        reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
        if reason.startswith("Cannot overwrite"):
            line, key = _duplicate(text)
            raise LessonError(int(at.group(1)) if at else line, key, "key-twice",
                              later("this key is given twice")) from None
        line = int(at.group(1)) if at else max(text.count("\n"), 1)
        raise LessonError(line, _key_on(text, line), "not-toml",
                          later("not TOML: {reason}", reason=reason)) from None
    except RecursionError:
        lines = text.splitlines() or [""]
        line = max(range(len(lines)), key=lambda i: lines[i].count("[") + lines[i].count("{")) + 1
        raise LessonError(line, _key_on(text, line), "too-deep", NESTED) from None


def _duplicate(text: str) -> tuple[int, str]:
    """The first key assigned twice in one table: its second line, and its path."""
    seen: set[tuple] = set()
    table: tuple = ()
    for k, found in enumerate(KeyLines(text).found):
        if found.header:
            table = (*found.path, k) if found.array else found.path
            continue
        if (table, found.path) in seen:
            return found.line, ".".join(found.path)
        seen.add((table, found.path))
    return max(text.count("\n"), 1), "(text)"


def _bounded(value: object, key: str, depth: int) -> None:
    """Any value, before the schema reads it: nesting, arrays and strings bounded."""
    if depth > MAX_NESTING:
        raise _Refused(re.sub(r"(\[\d+\])+$", "", key), "too-deep", NESTED)
    if isinstance(value, str) and len(value) > MAX_CODE:
        raise _Refused(key, "text-too-long", later("text of at most {most} characters", most=MAX_CODE))
    if isinstance(value, list):
        if len(value) > MAX_ARRAY:
            raise _Refused(key, "array-too-long", later("an array of at most {most} items", most=MAX_ARRAY))
        for i, item in enumerate(value):
            _bounded(item, f"{key}[{i}]", depth + 1)
    if isinstance(value, Mapping):
        for name, item in value.items():
            _bounded(item, f"{key}.{name}" if key else name, depth + 1)


# --- typed fields -------------------------------------------------------------------------

def _known(table: object, key: str, allowed: set[str], required: set[str] = frozenset()) -> Mapping:
    if not isinstance(table, Mapping):
        raise _Refused(key, "expected-table", later("expected a table"))
    for name in table:
        if name not in allowed:
            raise _Refused(f"{key}.{name}" if key else name, "unknown-key",
                           later("unknown key; expected one of {keys}", keys=", ".join(sorted(allowed))))
    for name in sorted(required - set(table)):
        raise _Refused(f"{key}.{name}" if key else name, "missing", later("missing"))
    return table


def _text(table: Mapping, name: str, key: str, limit: int, default: str | None = None) -> str:
    value = table.get(name, default)
    where = f"{key}.{name}" if key else name
    if not isinstance(value, str) or not value.strip():
        raise _Refused(where, "expected-text", later("expected text"))
    if len(value) > limit:
        raise _Refused(where, "text-too-long", later("text of at most {most} characters", most=limit))
    return value.strip()


def _slug(table: Mapping, name: str, key: str) -> str:
    value = table.get(name)
    if not isinstance(value, str) or not SLUG.fullmatch(value):
        raise _Refused(f"{key}.{name}" if key else name, "expected-id",
                       later("expected an id: up to 40 letters, digits, - and _, such as {example}",
                             example="detach-challenge"))
    return value


def _int(value: object, key: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _Refused(key, "expected-whole-number", WHOLE_NUMBER(low, high))
    return value


def _code(value: object, key: str, earlier: Mapping[str, str]) -> str:
    """Code as a lesson gives it: text, ``{edit = "loop"}`` (a ready-made edit, or "seed"), or
    ``{step = "heads"}`` (the code a step so far opens Your code on, its own included)."""
    if isinstance(value, Mapping):
        if "step" in value:
            _known(value, key, {"step"})
            if not isinstance(value["step"], str) or value["step"] not in earlier:
                raise _Refused(f"{key}.step", "expected-step", later(
                    "expected the id of a step so far on Your code: {steps}", steps=", ".join(earlier))
                    if earlier else later("expected the id of a step so far on Your code: there is none"))
            return earlier[value["step"]]
        _known(value, key, {"edit"}, {"edit"})
        name = value["edit"]
        if name == "seed":
            return seed_source()
        if not isinstance(name, str) or name not in EDITS:
            raise _Refused(f"{key}.edit", "expected-edit",
                           later("expected {seed} or a ready-made edit: {edits}", seed="seed",
                                 edits=", ".join(EDITS)))
        return apply(EDITS[name])
    if not isinstance(value, str) or not value.strip():
        raise _Refused(key, "expected-code", later("expected code: text, {edit} or {step}",
                                                  edit='{edit = "NAME"}', step='{step = "ID"}'))
    if len(value) > MAX_CODE:
        raise _Refused(key, "code-too-long", later("code of at most {most} characters", most=MAX_CODE))
    return value


# --- the lesson ---------------------------------------------------------------------------

def _lesson(data: Mapping, text: str) -> Lesson:
    _known(data, "", {"format", "id", "title", "about", "steps"}, {"id", "title", "steps"})
    if "format" in data:
        _int(data["format"], "format", 1, 1)
    steps = data["steps"]
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise _Refused("steps", "expected-steps", later("expected 1 to {most} [[steps]]", most=MAX_STEPS))
    codes: dict[str, str] = {}  # step id -> the code it opens Your code on, for later steps to name
    read = tuple(_step(s, f"steps[{i}]", codes) for i, s in enumerate(steps))
    for what, ids in (("step", [s.id for s in read]),
                      ("challenge", [s.challenge.id for s in read if s.challenge is not None])):
        for i, name in enumerate(ids):
            if name in ids[:i]:
                key = (f"steps[{i}].id" if what == "step"
                       else f"steps[{_challenge_index(read, i)}].challenge.id")
                twice = (later("another step has the id {id}: ids are unique", id=repr(name))
                         if what == "step"
                         else later("another challenge has the id {id}: ids are unique", id=repr(name)))
                raise _Refused(key, f"{what}-id-twice", twice)
    about = _text(data, "about", "", TEXT["about"]) if "about" in data else ""
    return Lesson(_slug(data, "id", ""), _text(data, "title", "", TEXT["title"]), about, read, text,
                  hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])


def _challenge_index(steps: tuple[Step, ...], k: int) -> int:
    return [i for i, s in enumerate(steps) if s.challenge is not None][k]


def _step(table: object, key: str, codes: dict[str, str]) -> Step:
    _known(table, key, {"id", "title", "sentence", "page", "link", "settings", "question", "answer",
                        "challenge"}, {"id", "title", "sentence", "page", "question", "answer"})
    page_name = table["page"]
    if not isinstance(page_name, str) or page_name not in PAGES:
        raise _Refused(f"{key}.page", "expected-page",
                       later("expected a page: {pages}", pages=", ".join(PAGES)))
    page = PAGES[page_name]
    code = _step_code(table.get("settings", {}), f"{key}.settings", codes) if page == CODE_PAGE else None
    if code is not None:  # its own challenge, and later steps, may name it
        codes[_slug(table, "id", key)] = code
    challenge = (_challenge(table["challenge"], f"{key}.challenge", code, codes) if "challenge" in table
                 else None)
    answer, reads = _answer(table["answer"], f"{key}.answer", page, challenge)
    if page == CODE_PAGE:
        settings, extra = CodeSettings(code, challenge.answer if challenge else None), ()
    else:
        settings, extra = _settings(table.get("settings", {}), f"{key}.settings", page, reads)
    text, ask = _question(table["question"], f"{key}.question")
    link = _text(table, "link", key, TEXT["link"], default=f"Open {page_name}")
    return Step(_slug(table, "id", key), _text(table, "title", key, TEXT["title"]),
                _text(table, "sentence", key, TEXT["sentence"]), text, ask, page, link, settings, answer,
                challenge, extra)


def _step_code(table: object, key: str, earlier: Mapping[str, str]) -> str:
    _known(table, key, {"code", "edit", "step"})
    if len(table) != 1:
        raise _Refused(key, "one-code", later("Your code opens on one code: give code, edit or step"))
    ((name, value),) = table.items()
    given = (value, f"{key}.code") if name == "code" else ({name: value}, key)
    code = _code(*given, earlier)
    if code_to_link(code) is None:
        raise _Refused(f"{key}.{name}", "code-too-long-for-link",
                       later("this code is too long for Your code's link"))
    return code


def _settings(table: object, key: str, page: str, reads: type) -> tuple[object, tuple[tuple[str, str], ...]]:
    """A page's settings -> (the config the answer reads, the page's other knobs for its link)."""
    knobs = {k.name: k for k in PAGE_KNOBS[page]}
    _known(table, key, set(knobs))
    given: dict[str, str] = {}
    for name, value in table.items():
        knob = knobs[name]
        kind = int if isinstance(knob, IntKnob) else str
        if isinstance(value, bool) or not isinstance(value, kind):
            raise _Refused(f"{key}.{name}", "expected-whole-number" if kind is int else "expected-text",
                           later("expected a whole number") if kind is int else later("expected text"))
        parsed, message = knob.parse(str(value))
        if message or (isinstance(knob, ChoiceKnob) and parsed != value):
            raise _Refused(f"{key}.{name}", "expected-setting", message or ONE_OF(knob.choices))
        given[name] = str(parsed)
    fields = {k.name for k in reads.KNOBS}
    config, notes = reads.from_params({n: v for n, v in given.items() if n in fields})
    if notes:
        raise _Refused(key, "settings", " ".join(notes))  # the knobs' own words, said as they parsed
    return config, tuple((n, v) for n, v in given.items() if n not in fields)


def _question(table: object, key: str) -> tuple[str, Question]:
    _known(table, key, {"text", "choices", "low", "high", "tolerance"}, {"text"})
    text = _text(table, "text", key, TEXT["text"])
    if "choices" in table:
        if {"low", "high", "tolerance"} & set(table):
            raise _Refused(f"{key}.choices", "choices-and-bounds",
                           later("a question has choices, or low and high: not both"))
        choices = table["choices"]
        if not isinstance(choices, Mapping) or not 2 <= len(choices) <= MAX_CHOICES:
            raise _Refused(f"{key}.choices", "expected-choices",
                           later("expected 2 to {most} choices: {form}", most=MAX_CHOICES,
                                 form='{ id = "words", ... }'))
        words = []
        for name in choices:
            if not SLUG.fullmatch(name):
                raise _Refused(f"{key}.choices.{name}", "choice-id",
                               later("a choice's id: letters, digits, - and _"))
            words.append(_text(choices, name, f"{key}.choices", TEXT["choice"]))
            if words[-1] in words[:-1]:
                raise _Refused(f"{key}.choices.{name}", "choice-twice",
                               later("two choices with the same words"))
        return text, Question("choice", choices=tuple(words), choice_ids=tuple(choices))
    _known(table, key, {"text", "low", "high", "tolerance"}, {"text", "low", "high"})
    low = _int(table["low"], f"{key}.low", -MAX_NUMBER, MAX_NUMBER)
    high = _int(table["high"], f"{key}.high", low, MAX_NUMBER)
    tolerance = _int(table.get("tolerance", 0), f"{key}.tolerance", 0, high - low)
    return text, Question("number", low, high, tolerance=tolerance)


def _answer(table: object, key: str, page: str, challenge: Challenge | None) -> tuple[AnswerSpec, type]:
    if not isinstance(table, Mapping) or not isinstance(table.get("measure"), str) \
            or table["measure"] not in MEASURES:
        raise _Refused(f"{key}.measure", "expected-measure",
                       later("expected a measure: {measures}", measures=", ".join(MEASURES)))
    declared = MEASURES[table["measure"]]
    _known(table, key, {"measure", "label", "detail", *declared.params})
    if declared.reads is not SETTINGS[page]:
        pages = ", ".join(n for n, f in PAGES.items() if SETTINGS[f] is declared.reads)
        raise _Refused(f"{key}.measure", "measure-page",
                       later("{measure} answers on these pages: {pages}", measure=declared.name, pages=pages))
    if declared.needs_answer and (challenge is None or challenge.answer is None):
        raise _Refused(f"{key}.measure", "measure-needs-challenge",
                       later("{measure} compares the step's code with its challenge's answer: the step "
                             "needs a challenge", measure=declared.name))
    params = []
    for name, param in declared.params.items():
        if name in table:
            value = table[name]
            if param.kind == "int":
                value = _int(value, f"{key}.{name}", param.low, param.high)
            elif param.kind == "choice" and value not in param.choices:
                raise _Refused(f"{key}.{name}", "expected-choice", ONE_OF(param.choices))
            elif param.kind == "op":
                _op(value, f"{key}.{name}")
            params.append((name, value))
        elif param.required:
            raise _Refused(f"{key}.{name}", "measure-needs-param",
                           later("{measure} needs its {param}", measure=declared.name, param=name))
    words = {name: _template(table, name, key, declared.values)
             for name in ("label", "detail") if name in table}
    return AnswerSpec(declared.name, tuple(params), **words), declared.reads


def _op(value: object, key: str) -> None:
    try:
        op_names(value, key)
    except FactError as bad:
        raise _Refused(key, bad.code, bad.words) from None


def _template(table: Mapping, name: str, key: str, values: tuple[str, ...]) -> str:
    text = _text(table, name, key, MAX_TEMPLATE)
    try:
        names = placeholders(text)
    except ValueError as bad:
        raise _Refused(f"{key}.{name}", "placeholder", bad.args[0]) from None
    for found in names:
        if found not in values:
            raise _Refused(f"{key}.{name}", "unknown-value",
                           later("{name} is not a value of this measure: {values}", name=f"{{{found}}}",
                                 values=", ".join(values)) if values
                           else later("{name} is not a value of this measure: it has none",
                                      name=f"{{{found}}}"))
    return text


def _challenge(table: object, key: str, step_code: str | None, earlier: Mapping[str, str]) -> Challenge:
    _known(table, key, {"id", "title", "prompt", "start", "answer", "check"},
           {"id", "title", "prompt", "answer", "check"})
    start = _code(table["start"], f"{key}.start", earlier) if "start" in table else step_code or seed_source()
    answer = _code(table["answer"], f"{key}.answer", earlier)
    try:
        check = parse_check(table["check"], reference=answer)
    except FactError as bad:
        where = f"{key}.check.{bad.key}" if bad.key != "check" else f"{key}.check"
        raise _Refused(where, bad.code, bad.words) from None
    return Challenge(_slug(table, "id", key), _text(table, "title", key, TEXT["title"]),
                     _text(table, "prompt", key, TEXT["prompt"]), start, answer, check)
