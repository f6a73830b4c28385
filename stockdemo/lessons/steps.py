"""A parsed lesson: its steps, each a page with settings, a question, a declared answer and
optionally a challenge. Built only by ``schema.parse_lesson``; frozen, so a step is its own
cache key (``ui.cached_answer``).
"""

from __future__ import annotations

from dataclasses import dataclass

from stockdemo.config import PAGE_KNOBS, RunConfig, TrainConfig
from stockdemo.lab import LengthsConfig
from stockdemo.lessons.checks import Check
from stockdemo.lessons.code_answers import CodeSettings
from stockdemo.lessons.measures import Answer, AnswerSpec
from stockdemo.lessons.question import Question

Settings = RunConfig | TrainConfig | LengthsConfig | CodeSettings


@dataclass(frozen=True)
class Challenge:
    """What the teacher asks the class on Your code: the prompt above every student's editor,
    the code it opens with, the reference answer, and the check each student's run gets."""

    id: str  # stable: a lesson's own id, or a ready-made edit's name ("detach"), or "prompt"
    title: str  # short, for the teacher's picker
    prompt: str  # what a student reads above the editor
    start: str  # the code the editor opens with
    answer: str | None  # the reference answer (None: a prompt in the teacher's own words)
    check: Check


@dataclass(frozen=True)
class Step:
    id: str  # stable across languages and edits: the class's results keep it
    title: str
    context: str  # one sentence
    question: str
    ask: Question  # how the question is answered and marked
    page: str  # page file relative to the app root
    link_label: str
    settings: Settings  # what the linked page opens with, and what the answer runs
    answer: AnswerSpec
    challenge: Challenge | None = None
    link_extra: tuple[tuple[str, str], ...] = ()  # page knobs the lesson set besides the settings'

    @property
    def link_knobs(self) -> tuple[str, ...]:
        """Every field of ``settings`` the linked page binds to its URL, so a link resets
        whatever an earlier experiment left set."""
        return tuple(k.name for k in PAGE_KNOBS[self.page] if k in self.settings.KNOBS)

    @property
    def query(self) -> dict[str, str]:
        """The link's query parameters: the page's controls set to this step's settings."""
        knobs = {name: str(getattr(self.settings, name)) for name in self.link_knobs}
        return {**knobs, **dict(self.link_extra)}

    def reveal(self) -> Answer:
        """Run the experiment now and answer the question from what it produced, in the words of
        the language spoken now."""
        return self.live_answer().said()

    def live_answer(self) -> Answer:
        """``reveal``'s answer with its words as Messages, said by whoever shows it: what a
        cache every session shares keeps (``ui.cached_answer``)."""
        return self.answer.reveal(self.settings)


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    about: str  # one sentence, or ""
    steps: tuple[Step, ...]
    text: str  # the TOML it was parsed from: what a link, a download or the class store keeps
    digest: str  # the text's hash: one lesson, one digest

    def challenges(self) -> dict[str, Challenge]:
        """The lesson's challenges by id, in step order."""
        return {s.challenge.id: s.challenge for s in self.steps if s.challenge is not None}
