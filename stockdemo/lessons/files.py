"""The lessons this project ships: ``lessons/*.toml`` at the repository's root, which the
wheel carries inside the package (``setup.py`` copies them to ``stockdemo/lessons/files/``).

    builtin_lesson()                  # lessons/dynamic-graphs.toml, parsed once
    shipped_lesson("transformer-block")
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from stockdemo.lessons.schema import parse_lesson
from stockdemo.lessons.steps import Lesson

REPOSITORY = Path(__file__).resolve().parents[2] / "lessons"
PACKAGED = Path(__file__).with_name("files")
BUILTIN = "dynamic-graphs"


def lesson_files() -> Path:
    """The folder of shipped lessons: the repository's, else the installed package's."""
    return REPOSITORY if REPOSITORY.is_dir() else PACKAGED


def shipped() -> tuple[str, ...]:
    """The names of the shipped lessons (file names without ``.toml``), ours first."""
    names = sorted(p.stem for p in lesson_files().glob("*.toml"))
    return tuple(sorted(names, key=lambda n: n != BUILTIN))


@cache
def shipped_lesson(name: str) -> Lesson:
    """A shipped lesson, parsed once per process. Raises KeyError for a name not shipped."""
    if name not in shipped():
        raise KeyError(name)
    return parse_lesson((lesson_files() / f"{name}.toml").read_bytes())


def builtin_lesson() -> Lesson:
    """Ours: the 45-minute lesson on the seed's StockPredictor."""
    return shipped_lesson(BUILTIN)
