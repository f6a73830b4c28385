"""Guidance that is true: the README's map of the tree, and every path or module name the docs,
the browser code and the source mention, checked against the tree.

A file moved or renamed without its mentions fails here, with where each stale one stands.
"""

from __future__ import annotations

import re

import pytest

from harness.helpers import ROOT

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


DECISIONS = ROOT / "docs" / "decisions.md"
INDEX_START, INDEX_END = "<!-- index: python -m tests.test_docs writes it -->", "<!-- /index -->"
# A decision's module: the first path in its heading, else its section's; short paths are
# read from the core's folders (sandbox/kernel.py is stockdemo/sandbox/).
_WHERE = re.compile(r"`([\w./{},-]+\.(?:py|js|toml)|[\w./-]+/)`|\(([\w./]+\.(?:py|js)),")


def _module_of(heading: str) -> str | None:
    for a, b in _WHERE.findall(heading):
        path = (a or b).split(" ")[0]
        if path.startswith(("stockdemo/", "frontend/", "bench/", "tests/", "deploy/", "pyproject")):
            top = path
        elif (CORE / path.split("/")[0]).exists():
            top = "stockdemo/" + path
        elif path.endswith(".js"):
            top = "frontend/graph_view/"
        else:
            continue
        parts = top.split("/")
        if parts[0] == "stockdemo" and len(parts) > 2:
            return "/".join(parts[:2]) + "/"  # a folder of the core
        if parts[0] == "frontend" and len(parts) > 1:
            return "/".join(parts[:2]) + "/"
        return top if not top.startswith(("bench/", "tests/", "deploy/")) else parts[0] + "/"
    return None


def _anchor(heading: str, seen: dict[str, int]) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
    n = seen.get(slug, 0)
    seen[slug] = n + 1
    return slug if n == 0 else f"{slug}-{n}"


def decisions_index(text: str) -> str:
    """The index of docs/decisions.md by module: every decision (### and ####) under the module
    it is about, linked."""
    body = text.split(INDEX_END)[-1]
    groups: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    section = None
    for line in body.splitlines():
        m = re.match(r"^(#{2,4}) (.+)$", line)
        if not m:
            continue
        level, heading = len(m.group(1)), m.group(2).strip()
        anchor = _anchor(heading, seen)
        if level == 2:
            section = _module_of(heading)
            continue
        module = _module_of(heading) or section or "elsewhere"
        groups.setdefault(module, []).append(f"[{heading}](#{anchor})")
    lines = [INDEX_START, "", "By module:", ""]
    for module, items in sorted(groups.items()):
        lines += [f"- **`{module}`**", *(f"  - {item}" for item in items)]
    return "\n".join([*lines, "", INDEX_END])


def test_decisions_are_indexed_by_module_and_the_index_is_current():
    text = DECISIONS.read_text(encoding="utf-8")
    assert INDEX_START in text and INDEX_END in text
    current = text[text.index(INDEX_START):text.index(INDEX_END) + len(INDEX_END)]
    assert current == decisions_index(text), "run: .venv/bin/python -m tests.test_docs"
    assert not re.search(r"^#+ .*\((?:stop|issue|task) ", text, re.M), "headings name modules, not sessions"


if __name__ == "__main__":
    text = DECISIONS.read_text(encoding="utf-8")
    head, rest = (text.split(INDEX_START)[0], text.split(INDEX_END)[-1]) if INDEX_START in text \
        else (text[:text.index("\n## ")] + "\n\n", text[text.index("\n## "):])
    index = decisions_index(text)
    DECISIONS.write_text(f"{head.rstrip()}\n\n{index}\n\n{rest.lstrip()}", encoding="utf-8")
