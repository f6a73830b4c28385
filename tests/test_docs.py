"""Guidance that is true: the README's map of the tree, and every path or module name the docs,
the browser code and the source mention, checked against the tree.

A file moved or renamed without its mentions fails here, with where each stale one stands:
``stockdemo/...`` paths and ``stockdemo.x.y`` names everywhere; and in docstrings, comments and
the guides (README.md, docs/architecture.md), bare file names (``capture.py``, ``ui/caches.py``),
dotted names of the repository's other packages (``harness.x``, ``tests.x``...) and the names of
modules the history removed (``code_graph``).
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

from harness.helpers import ROOT

README = ROOT / "README.md"
CORE = ROOT / "stockdemo"
# Where mentions are read: prose, browser code, Python (docstrings and comments included).
READ = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("frontend/*/src/*.js")),
        *sorted(CORE.rglob("*.py")),
        *sorted(p for p in (ROOT / "tests").rglob("*.py") if p.name != "test_docs.py"),
        *sorted((ROOT / "harness").glob("*.py")),
        *sorted((ROOT / "bench").glob("*.py")), *sorted((ROOT / "deploy").glob("*.py")),
        *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py", ROOT / "Makefile"]
PATH = re.compile(r"(?<![\w/.-])stockdemo/[\w/]*\w(?:\.\w+)*/?")
DOTTED = re.compile(r"(?<![\w.])stockdemo(?:\.[A-Za-z_]\w*)+")
# Dotted names that are no module: a key in the browser's sessionStorage, files named after
# the app, a name a test asks for to see it refused.
# Names that are no module of ours: file names, a test's own, and the sandbox's warm parent before
# the fork server, whose command line harness/cgroups.py still tells apart in a "before" run.
NOT_MODULES = {"stockdemo.teacher", "stockdemo.html", "stockdemo.svg", "stockdemo.payload.json",
               "stockdemo.no_such_name", "stockdemo.sandbox.parent"}


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
    more name, which the package (its __init__) or the module defines. The top folder may be a
    namespace package (bench/, deploy/: no __init__)."""
    parts = dotted.split(".")
    path = ROOT
    for i, part in enumerate(parts):
        if (path / part).is_dir() and ((path / part / "__init__.py").exists() or i == 0):
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
        if not source.exists():
            return False
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


# Bare names are read where people read: docstrings and comments of the code, and the guides.
# (docs/decisions.md and docs/hosting.md keep their history in the names of its day.)
CODE = [p for p in READ if p.suffix in (".py", ".js")]
GUIDES = [README, ROOT / "docs" / "architecture.md"]
FILE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:py|js))\b")
PACKAGES = re.compile(r"(?<![\w.])(?:harness|tests|bench|deploy)(?:\.[A-Za-z_]\w*)+")
# Files named that are not the repository's: other projects', examples of a learner's.
NOT_OURS = {"plotly.js", "app_session.py", "my_model.py", "script.py", "a.py", "b.py", "c.py"}


def prose(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of a file's docstrings and comments (Python, JavaScript); a guide: every line."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".js":
        return [(text.count("\n", 0, m.start()) + i, part)
                for m in re.finditer(r"//[^\n]*|/\*.*?\*/", text, re.S)
                for i, part in enumerate(m.group(0).splitlines(), 1)]
    if path.suffix != ".py":
        return list(enumerate(text.splitlines(), 1))
    found = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
             if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found += [(body[0].lineno + i, part) for i, part in enumerate(body[0].value.value.splitlines())]
    return found


def _tracked() -> list[str]:
    return subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.split()


def former_modules() -> set[str]:
    """Modules the history removed or renamed, named like modules (snake_case: ``code_graph``),
    that no module or folder of the tree is named now; a function named so now is
    ``defined_now``'s."""
    log = subprocess.run(["git", "log", "--diff-filter=DR", "--name-status", "--format=", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    gone = {Path(line.split("\t")[1]).stem for line in log.splitlines()
            if line.count("\t") >= 1 and line.split("\t")[1].endswith((".py", ".js"))}
    here = {Path(t).stem for t in _tracked()} | {part for t in _tracked() for part in Path(t).parts[:-1]}
    return {name for name in gone - here if "_" in name.strip("_")}


def defined_now() -> set[str]:
    """Every top-level function and class of the repository's Python."""
    return {node.name for path in _tracked() if path.endswith(".py") and (ROOT / path).exists()
            for node in ast.parse((ROOT / path).read_text(encoding="utf-8")).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def stale_names(line: str, files: list[str], former: set[str], aliases: set[str] = frozenset(),
                defined: set[str] = frozenset()) -> list[str]:
    """The names in ``line`` of files (``capture.py``, ``ui/caches.py``) and modules (``harness.x``,
    a former module's ``code_graph``) that the tree does not have. ``aliases``: names a file
    imports ``as``; ``defined``: functions and classes, which a former module's name may be now
    (but not with an attribute: ``view_payload.view_json``)."""
    bad = [f for f in FILE.findall(line) if f not in NOT_OURS and not re.search(r"\b[A-Z]+\b", f)
           and not any(t == f or t.endswith("/" + f) for t in files)]
    bad += [d for d in PACKAGES.findall(line) if not _module_exists(d)]
    bad += [name for name in former - set(aliases)
            if re.search(rf"(?<![\w/.-]){name}\.\w" if name in defined else rf"(?<![\w/.-]){name}(?![\w/-])",
                         line)]
    return bad


def test_no_docstring_comment_or_guide_names_a_file_or_module_the_tree_does_not_have():
    files, former, defined, found = _tracked(), former_modules(), defined_now(), []
    for path in CODE + GUIDES:
        aliases = set(re.findall(r"\bas (\w+)", path.read_text(encoding="utf-8")))
        found += [f"{path.relative_to(ROOT)}:{n}: {name}" for n, line in prose(path)
                  for name in stale_names(line, files, former, aliases, defined)]
    assert not found, "stale names (moved or removed):\n" + "\n".join(found)


@pytest.mark.parametrize("line, stale", [
    ("``code_graph.raw_graph``'s record", True), ("code_graph's recorder", True),
    ("the graph's recorder (graph/recorder.py)", False), ("the camera eases (frame.js)", False),
    ("laid out again (view_payload.py)", True), ("sandbox/kernel.py's walls", False),
    ("python -m harness.import_graph", False), ("python -m tests.import_graph", True),
    ("tests.session_probe.GraphSession", True), ("harness.servers.Target", False),
    ("a key, code_graphs", False), ("pages/NAME.py: a new page", False),
    ("``view_payload``, a function now", False), ("``view_payload.view_json``", True),
])
def test_the_bare_name_check_tells_a_removed_module_from_a_present_one(line, stale):
    found = stale_names(line, _tracked(), {"code_graph", "view_payload"}, defined={"view_payload"})
    assert bool(found) == stale


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
