"""Guidance that is true: the README's map of the tree, and every path or module name the docs,
the browser code and the source mention, checked against the tree.

A file moved or renamed without its mentions fails here, with where each stale one stands.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers import ROOT

README = ROOT / "README.md"
CORE = ROOT / "stockdemo"
# Where mentions are read: prose, browser code, Python (docstrings and comments included).
READ = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("frontend/*/src/*.js")),
        *sorted(CORE.rglob("*.py")),
        *sorted(p for p in (ROOT / "tests").rglob("*.py") if p.name != "test_docs.py"),
        *sorted((ROOT / "bench").glob("*.py")), *sorted((ROOT / "deploy").glob("*.py")),
        *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py", ROOT / "Makefile"]
PATH = re.compile(r"(?<![\w/.-])stockdemo/[\w/]*\w(?:\.\w+)*/?")
DOTTED = re.compile(r"(?<![\w.])stockdemo(?:\.[A-Za-z_]\w*)+")
# Dotted names that are no module: a key in the browser's sessionStorage, files named after
# the app, a name a test asks for to see it refused.
NOT_MODULES = {"stockdemo.teacher", "stockdemo.html", "stockdemo.svg", "stockdemo.payload.json",
               "stockdemo.no_such_name"}


def layout_block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Layout"):]
    return section.split("```")[1]


def test_every_path_the_readmes_map_names_exists():
    missing = []
    ui = False
    for line in layout_block().splitlines():
        if not line.strip() or line.startswith(" " * 10):  # a description's second line
            continue
        if line.startswith("  "):  # stockdemo/ui/'s own modules, named in a row
            names = re.split(r",\s*", line.split("  ")[1].strip()) if ui else []
            missing += [f"stockdemo/ui/{n}" for n in names if not (CORE / "ui" / n).exists()]
            continue
        for entry in re.split(r",\s*", line.split("  ")[0].strip()):
            ui = entry == "stockdemo/ui/"
            if not list(ROOT.glob(entry.rstrip("/"))):
                missing.append(entry)
    assert not missing, f"README.md's map names what the tree does not have: {missing}"


def test_the_readmes_map_names_every_folder_and_top_level_module_of_the_core():
    block = layout_block()
    parts = [p for p in CORE.iterdir() if (p.suffix == ".py" or (p / "__init__.py").exists())]
    unnamed = [p.name for p in parts
               if f"stockdemo/{p.name}{'/' if p.is_dir() else ''}" not in block]
    ui = [p.name for p in (CORE / "ui").glob("*.py") if p.name != "__init__.py"]
    unnamed += [f"ui/{n}" for n in ui if not re.search(rf"(?<![\w/]){re.escape(n)}", block)]
    assert not unnamed, f"add these to README.md's map (## Layout): {unnamed}"


def _path_exists(path: str) -> bool:
    """A path, or the stem of files written ``widget.{js,css}`` or ``stocks.csv.gz``."""
    path = path.rstrip("/")
    return bool(list(ROOT.glob(path)) or list(ROOT.glob(path + ".*")))


def _module_exists(dotted: str) -> bool:
    """``stockdemo.a.b.name``: the longest prefix that is a module or package, then at most one
    more name, which the package (its __init__) or the module defines."""
    parts = dotted.split(".")
    path = ROOT
    for i, part in enumerate(parts):
        if (path / part).is_dir() and (path / part / "__init__.py").exists():
            path = path / part
            continue
        if (path / f"{part}.py").exists():
            source = path / f"{part}.py"
            rest = parts[i + 1:]
        else:
            source = path / "__init__.py"
            rest = parts[i:]
        if not rest or rest[0].startswith("__"):
            return True
        return re.search(rf"\b{re.escape(rest[0])}\b", source.read_text(encoding="utf-8")) is not None
    return True


def stale_mentions() -> list[str]:
    found = []
    for file in READ:
        if not file.exists():
            continue
        text = file.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            for path in PATH.findall(line):
                if not _path_exists(path):
                    found.append(f"{file.relative_to(ROOT)}:{n}: {path}")
            for dotted in DOTTED.findall(line):
                if dotted not in NOT_MODULES and not _module_exists(dotted):
                    found.append(f"{file.relative_to(ROOT)}:{n}: {dotted}")
    return found


def test_no_doc_comment_or_docstring_names_a_module_that_is_not_there():
    found = stale_mentions()
    assert not found, "stale mentions (moved or removed):\n" + "\n".join(found)


@pytest.mark.parametrize("line, stale", [
    ("see stockdemo/code_graph.py", True), ("see stockdemo/graph/recorder.py", False),
    ("stockdemo.code_view.picture_of_record", True), ("stockdemo.code.view.drawing_of_record", False),
    ("stockdemo.ui.metric_row", False), ("stockdemo.sandbox.nothing_here", True),
])
def test_the_stale_check_tells_a_moved_module_from_a_present_one(line, stale):
    bad = [p for p in PATH.findall(line) if not _path_exists(p)]
    bad += [d for d in DOTTED.findall(line) if not _module_exists(d)]
    assert bool(bad) == stale
