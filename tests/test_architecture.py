"""The contract of the code: ``stockdemo/``'s stages in order, then ``ui/``'s own layers; no import
circle in Python or in the components' JavaScript; no hand-written module over 450 lines.

Each module of the package belongs to one stage (CORE_LAYERS, by its folder or its name at
the top, or by its own name where a folder spans two stages) and imports only its own stage
and those below; inside ``ui/`` the same holds for
its layers (LAYERS).

Read from the source (``harness/import_graph.py``: ``ast`` for Python, the ``import`` lines of
``frontend/*/src``): an import inside a function or under ``if TYPE_CHECKING`` counts as much
as one at the top. docs/architecture.md draws the layers and says where each kind of change goes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest

from harness.helpers import ROOT
from harness.import_graph import cycles, graph, hand_written, imports, js_graph, lines_of, modules

UI = "stockdemo.ui"
# The core, bottom first: what happens to a run, stage by stage. A module may import modules
# of its own stage and of the stages below it. Names are stockdemo's folders and top-level
# modules; "__init__" is the package's facade (``stockdemo.run``, ``stockdemo.show``).
CORE_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation: knobs, looks, the host, its fork server and its caches' budget, the model, the settings",
     ("i18n", "knobs", "theme", "heap", "host", "lru", "forkserver", "model", "cells", "config", "zoo",
      "shared_figure")),
    ("graph: the record of a run, its ids and its diff", ("graph",)),
    ("live: one run of the model", ("live",)),
    ("train: prices, windows, training and its workers", ("train",)),
    ("layout: where each node goes", ("layout",)),
    ("replay: the order the run happened in", ("replay",)),
    ("render: payload, DOT, poster, handout, node table", ("render",)),
    ("sandbox: learners' code, run apart", ("sandbox",)),
    ("the fork server's process: it forks the sandbox's runs and training's workers",
     ("forkserver.process",)),
    ("code: the learner's code made a drawing", ("code",)),
    ("experiments: the Lab, static graphs, figures, lessons (files, facts, measures), ours",
     ("figures", "static_graphs", "lab", "lessons", "lesson")),
    ("front doors: the notebook, the classroom, writing a lesson, the command line",
     ("notebook", "classroom", "authoring", "__main__")),
    ("the package's facade", ("__init__",)),
    ("ui: the Streamlit app, layered below (LAYERS)", ("ui",)),
)
# Bottom first. A module may import modules of its own layer and of the layers below it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base: Streamlit's private API, session keys, routes, hooks, built JS, the language",
     ("compat", "keys", "routes", "hooks", "assets", "language")),
    ("caches and widgets", ("caches", "stats", "url_sync", "widgets", "metrics", "elements", "seats")),
    ("the graph view", ("stage", "stage_route", "stage_watch", "compare", "graph_view",
                        "code_editor", "code_view", "code_route")),
    ("panels and page controls", ("controls", "steps", "downloads", "training", "captures",
                                  "code_run", "authoring")),
    ("the page frame", ("frame",)),
    ("class mode, a plug-in on the hooks", ("classmode", "classmode.*")),
    ("the facade, which registers class mode", ("",)),
)
CLASS_MODE = f"{UI}.classmode"
# Outside stockdemo, only class mode's own page may import it.
CLASS_PAGE = "pages/classroom.py"


def layer_of(module: str) -> int | None:
    """The index in LAYERS of a module of ``stockdemo.ui`` (None: it has no layer)."""
    short = module[len(UI) + 1:] if module != UI else ""
    for i, (_, members) in enumerate(LAYERS):
        for member in members:
            if short == member or (member.endswith(".*") and short.startswith(member[:-1])):
                return i
    return None


def ui_modules() -> dict:
    return {name: path for name, path in modules().items() if name == UI or name.startswith(UI + ".")}


def test_every_module_of_ui_has_a_layer():
    unplaced = [name for name in ui_modules() if layer_of(name) is None]
    assert not unplaced, f"add these to a layer in tests/test_architecture.py LAYERS: {unplaced}"


def upward_imports() -> list[str]:
    """Every import in stockdemo/ui of a module in a higher layer, as 'file:line: a (layer) -> b (layer)'."""
    def ui_layer(module: str) -> int | None:
        return layer_of(module) if module == UI or module.startswith(UI + ".") else None
    return _upward(ui_modules(), set(modules()), ui_layer, LAYERS, ROOT)


def _upward(checked: dict, known: set[str], layer: Callable[[str], int | None],
            layers: tuple, root) -> list[str]:
    """Every import in ``checked`` of a module in a higher layer, with its file and line."""
    found = []
    for name, path in checked.items():
        here = layer(name)
        for target, line in imports(name, path, known):
            there = layer(target)
            if here is not None and there is not None and there > here:
                found.append(f"{path.relative_to(root)}:{line}: {name} ({layers[here][0]}) "
                             f"imports {target} ({layers[there][0]})")
    return found


def test_no_module_of_ui_imports_from_a_layer_above_it():
    found = upward_imports()
    assert not found, "upward imports in stockdemo/ui:\n" + "\n".join(found)


def core_layer_of(module: str) -> int | None:
    """The index in CORE_LAYERS of any module of stockdemo (None: it has no stage): its own name
    ("forkserver.process") if a stage names it, else its folder's or its top-level name's."""
    parts = module.split(".")
    for unit in (".".join(parts[1:3]), parts[1] if len(parts) > 1 else "__init__"):
        found = next((i for i, (_, members) in enumerate(CORE_LAYERS) if unit in members), None)
        if found is not None:
            return found
    return None


def test_every_module_of_stockdemo_has_a_stage():
    unplaced = [name for name in modules() if core_layer_of(name) is None]
    assert not unplaced, f"add these to a stage in tests/test_architecture.py CORE_LAYERS: {unplaced}"


def core_upward_imports(root=ROOT) -> list[str]:
    """Every import in stockdemo of a module of a higher stage, as 'file:line: a (stage) -> b (stage)'."""
    found_modules = modules(root)
    return _upward(found_modules, set(found_modules), core_layer_of, CORE_LAYERS, root)


def test_no_module_of_stockdemo_imports_from_a_stage_above_it():
    found = core_upward_imports()
    assert not found, "upward imports in stockdemo:\n" + "\n".join(found)


def test_the_stage_check_sees_an_upward_import_in_the_core(tmp_path):
    """Broken on purpose: the graph's record importing the layout is caught, with its line."""
    core = tmp_path / "stockdemo"
    (core / "graph").mkdir(parents=True)
    (core / "layout").mkdir()
    for path in ("__init__.py", "graph/__init__.py", "layout/__init__.py", "layout/steps.py"):
        (core / path).write_text("")
    (core / "graph" / "ids.py").write_text("import re\n\ndef f():\n    from stockdemo.layout import steps\n")
    found = core_upward_imports(tmp_path)
    assert len(found) == 1 and found[0].startswith("stockdemo/graph/ids.py:4: stockdemo.graph.ids (graph")
    assert "imports stockdemo.layout.steps (layout" in found[0]


def test_no_import_circle_anywhere_in_stockdemo():
    found = cycles(graph())
    assert not found, "import circles (python -m harness.import_graph): " + "; ".join(
        " -> ".join(part) for part in found)


def test_no_import_circle_in_the_javascript_of_frontend():
    found = cycles(js_graph())
    assert not found, "import circles in frontend/*/src (python -m harness.import_graph): " + "; ".join(
        " -> ".join(part) for part in found)


def test_the_javascript_circle_check_sees_a_circle_through_three_modules(tmp_path):
    """Broken on purpose: three modules in a circle, one import written over two lines, one a
    re-export; a package import and a stylesheet are not modules of ours."""
    src = tmp_path / "frontend" / "view" / "src"
    src.mkdir(parents=True)
    (src / "a.js").write_text('import { select } from "d3-selection";\nimport {\n  b,\n} from "./b.js";\n')
    (src / "b.js").write_text('import "./style.css";\nexport { c } from "./c.js";\n')
    (src / "c.js").write_text('// import nothing from "./d.js" in a comment\nimport a from "./a.js";\n')
    assert cycles(js_graph(tmp_path)) == [[f"frontend/view/src/{n}.js" for n in "abca"]]


MAX_LINES = 450


def oversized(root=ROOT) -> list[str]:
    """Every hand-written module (Python or JavaScript) over MAX_LINES, as 'path: N lines'."""
    return [f"{path.relative_to(root).as_posix()}: {n} lines" for path in hand_written(root)
            if (n := lines_of(path)) > MAX_LINES]


def test_no_hand_written_module_is_over_450_lines_python_or_javascript():
    found = oversized()
    assert not found, (f"modules over {MAX_LINES} lines (split each into read, decide, draw):\n"
                       + "\n".join(found))


def test_the_size_check_sees_a_451_line_module_and_leaves_a_built_bundle_alone(tmp_path):
    for path, lines in {"stockdemo/graph/ids.py": 451, "stockdemo/graph/diff.py": 450,
                        "frontend/view/src/long.js": 451, "pages/long.py": 451}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\n" * lines)
    (tmp_path / "static").mkdir()
    banner = "/* built from frontend/view by `npm run build`.\n   Do not edit: change frontend/view/src. */\n"
    (tmp_path / "static" / "view.js").write_text(banner + "x = 1;\n" * 500)
    assert oversized(tmp_path) == ["frontend/view/src/long.js: 451 lines", "pages/long.py: 451 lines",
                                   "stockdemo/graph/ids.py: 451 lines"]


def test_the_core_never_imports_streamlit_nor_the_ui():
    known = set(modules())
    found = []
    for name, path in modules().items():
        if name == UI or name.startswith(UI + "."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                found.append(f"{name}:{node.lineno} imports streamlit")
        found += [f"{name}:{line} imports {target}" for target, line in imports(name, path, known)
                  if target == UI or target.startswith(UI + ".")]
    assert not found, found


@pytest.mark.parametrize("script", ["app.py", *sorted(p.relative_to(ROOT).as_posix()
                                                    for p in (ROOT / "pages").glob("*.py"))])
def test_page_scripts_reach_class_mode_only_through_the_hooks(script):
    """The Playground and the Lesson call ui functions; class mode answers through the hooks.
    Only the Class page, class mode's own, imports it."""
    tree = ast.parse((ROOT / script).read_text(encoding="utf-8"))
    named = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            named += [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
    reaches = [n for n in named if n == CLASS_MODE or n.startswith(CLASS_MODE + ".")]
    if script == CLASS_PAGE:
        assert reaches, "the Class page is class mode's own: it draws class mode's console"
    else:
        assert not reaches, f"{script} imports class mode: {reaches}"


def test_the_layer_check_sees_an_upward_import_inside_a_function(tmp_path):
    """The check reads function bodies too: a lazy import is still an import."""
    package = tmp_path / "stockdemo" / "ui"
    package.mkdir(parents=True)
    (tmp_path / "stockdemo" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "frame.py").write_text("")
    (package / "keys.py").write_text("def f():\n    from stockdemo.ui import frame\n")
    found = imports("stockdemo.ui.keys", package / "keys.py", set(modules(tmp_path)))
    assert found == [("stockdemo.ui.frame", 2)]
    assert layer_of("stockdemo.ui.frame") > layer_of("stockdemo.ui.keys")


def test_a_folder_spanning_two_stages_is_checked_module_by_module(tmp_path):
    """Broken on purpose: the fork server's client (foundation) importing its process (above the
    sandbox) is caught, while the process importing the client is not."""
    core = tmp_path / "stockdemo" / "forkserver"
    core.mkdir(parents=True)
    for path in ("__init__.py", "forkserver/__init__.py", "forkserver/wire.py"):
        (tmp_path / "stockdemo" / path).write_text("")
    (core / "process.py").write_text("from stockdemo.forkserver import wire\n")
    (core / "client.py").write_text("def f():\n    from stockdemo.forkserver import process\n")
    found = core_upward_imports(tmp_path)
    assert len(found) == 1 and found[0].startswith("stockdemo/forkserver/client.py:2: ")
    assert "imports stockdemo.forkserver.process (the fork server's process" in found[0]


# What tests share lives in harness/: a test imports neither a benchmark nor another test module
# (conftest files hold the fixtures, pytest's way), harness imports neither, and one ROOT is
# defined, harness/helpers.py's. tests/corpus and tests/hostile are learners' programs, not modules.
PROGRAMS = ("tests/corpus/", "tests/hostile/")
THE_ROOT = "harness/helpers.py"


def _sources(root, *folders: str) -> list:
    return [p for folder in folders for p in sorted((root / folder).rglob("*.py"))
            if not p.relative_to(root).as_posix().startswith(PROGRAMS)]


def stray_imports(root=ROOT) -> list[str]:
    """Every import in tests/ or harness/ of bench/ or of tests/ (a relative one included), and in
    bench/ of tests/, as 'file:line: imports module'."""
    benches = {p.stem for p in (root / "bench").glob("*.py")}
    found = []
    for path in _sources(root, "tests", "harness", "bench"):
        where = path.relative_to(root).as_posix()
        banned = {"tests"} if where.startswith("bench/") else {"tests", "bench", *benches}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["." * node.level + (node.module or "")]
            else:
                continue
            found += [f"{where}:{node.lineno}: imports {n}" for n in names
                      if n.startswith(".") or n.split(".")[0] in banned]
    return sorted(found)


def own_roots(root=ROOT) -> list[str]:
    """Every ``ROOT = ...`` in tests/, harness/ and bench/ but harness/helpers.py's, as 'file:line'."""
    found = []
    for path in _sources(root, "tests", "harness", "bench"):
        where = path.relative_to(root).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            if where != THE_ROOT and any(isinstance(t, ast.Name) and t.id == "ROOT" for t in targets):
                found.append(f"{where}:{node.lineno}")
    return found


def test_no_test_imports_a_benchmark_or_another_test_module():
    found = stray_imports()
    assert not found, "move what is shared to harness/ (fixtures: a conftest.py):\n" + "\n".join(found)


def test_one_root_harness_helpers_root():
    found = own_roots()
    assert not found, "import ROOT from harness.helpers instead of defining it:\n" + "\n".join(found)


def test_the_shared_code_checks_see_a_test_importing_a_bench_a_test_and_its_own_root(tmp_path):
    files = {"bench/load.py": "ROOT = 1\n", "harness/helpers.py": "ROOT = 2\n",
             "tests/test_a.py": "import os\nfrom tests.test_b import helper\n",
             "tests/browser/test_c.py": "def f():\n    import load\n",
             "tests/test_d.py": "from .conftest import ROOT\nROOT = 3\n",
             "tests/corpus/t01.py": "import tests\n", "harness/x.py": "from bench.load import Session\n"}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert stray_imports(tmp_path) == ["harness/x.py:1: imports bench.load",
                                       "tests/browser/test_c.py:2: imports load",
                                       "tests/test_a.py:2: imports tests.test_b",
                                       "tests/test_d.py:1: imports .conftest"]
    assert own_roots(tmp_path) == ["tests/test_d.py:2", "bench/load.py:1"]
