"""One pipeline, read from the source: every drawing of a run is record -> Graph -> (Picture, Trace)
through the same functions, and one backward replay hooks autograd's nodes.

The Playground, a training step, Your code, the notebook and the command line all start from a
record (``stockdemo.graph.recorder.raw_graph``). Each step after it has one place: the test
fails naming any other module of the core that imports that step's function, or that walks
autograd's graph or hooks its nodes on its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.helpers import ROOT

CORE = ROOT / "stockdemo"
# (module, function) -> the only modules of the core that may import it.
ONE_PLACE = {
    ("stockdemo.graph.tagged", "graph_of_tagged"): {"stockdemo/graph/ids.py"},  # a tagged record's ids
    ("stockdemo.layout.steps", "layout"): {"stockdemo/layout/views.py"},  # the one choice of view
    ("stockdemo.layout.by_code", "layout_code"): {"stockdemo/layout/views.py"},
    ("stockdemo.replay.record", "trace_of_record"): {"stockdemo/code/view.py"},  # record -> drawing
    ("stockdemo.graph.backward", "replay_backward"): {"stockdemo/graph/recorder.py"},  # the replay
}
# Attributes of autograd's nodes -> the only module that may read them: one walk, one replay.
ONE_READER = {"next_functions": "stockdemo/graph/recorder.py",
              "register_prehook": "stockdemo/graph/backward.py"}


def offences(root: Path) -> list[str]:
    """Every import of a ONE_PLACE function and every read of a ONE_READER attribute outside its place."""
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    allowed = ONE_PLACE.get((node.module, alias.name))
                    if allowed is not None and name not in allowed:
                        found.append(f"{name}:{node.lineno} imports {node.module}.{alias.name}")
            elif isinstance(node, ast.Attribute) and ONE_READER.get(node.attr, name) != name:
                found.append(f"{name}:{node.lineno} reads .{node.attr}")
    return found


def test_every_run_is_drawn_and_replayed_through_one_place_per_step():
    found = offences(CORE)
    assert not found, "a second pipeline:\n" + "\n".join(found)


@pytest.mark.parametrize("module, line", [
    ("stockdemo/live/run.py", "from stockdemo.layout.steps import layout\n"),
    ("stockdemo/notebook/record.py", "from stockdemo.replay.record import trace_of_record\n"),
    ("stockdemo/lab/saved.py", "def walk(fn):\n    return fn.next_functions\n"),
    ("stockdemo/replay/record.py", "def hook(fn, f):\n    return fn.register_prehook(f)\n"),
])
def test_a_second_pipeline_is_caught_where_it_stands(tmp_path, module, line):
    copy = tmp_path / "stockdemo"
    for path in CORE.rglob("*.py"):
        target = copy / path.relative_to(CORE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    broken = copy / Path(module).relative_to("stockdemo")
    broken.write_text(broken.read_text(encoding="utf-8") + line, encoding="utf-8")
    found = offences(copy)
    assert len(found) == 1 and found[0].startswith(f"{module}:")
