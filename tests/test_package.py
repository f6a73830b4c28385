"""stockdemo as a library: the wheel, its declared dependencies, and a fresh virtual environment.

The wheel is built by ``python -m build --wheel`` from a clean copy of the repository's
files (what a clone holds), installed with the dependencies it declares into a virtual
environment that sees no other site-packages, and used from a directory with no
repository beside it: the default run, and an offline handout carrying the view's
JavaScript. The environment (about 1.2 GB: torch is most of it) is kept under
artifacts/ between runs, one per set of declared dependencies; a later run reinstalls
only the wheel and checks the dependencies still hold (``pip check``).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
import torch
from packaging.requirements import Requirement

from harness.builds import normalised, pins, start_package
from harness.helpers import ROOT
from stockdemo import RunConfig, StockPredictor, run
from stockdemo.layout.steps import layout
from stockdemo.render.handout import _inline_script

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def declared() -> dict[str, list[Requirement]]:
    """'' (the core) and each extra -> its requirements, as pyproject.toml declares them."""
    groups = {"": PYPROJECT["dependencies"], **PYPROJECT["optional-dependencies"]}
    return {k: [Requirement(r) for r in v] for k, v in groups.items()}


def test_every_pin_of_the_app_is_declared_with_a_range_the_pin_satisfies():
    app_pins = pins(ROOT / "requirements.txt")
    by_name = {normalised(r.name): r for reqs in declared().values() for r in reqs}
    assert set(app_pins) <= set(by_name), f"pinned but not declared: {set(app_pins) - set(by_name)}"
    for name, version in app_pins.items():
        assert by_name[name].specifier.contains(version), f"{name}=={version} outside {by_name[name]}"


def test_the_declared_torch_admits_the_cpu_file_on_disk_and_no_newer_release():
    (torch_req,) = [r for r in declared()[""] if r.name == "torch"]
    assert torch_req.specifier.contains(torch.__version__)  # 2.13.0+cpu, the file on disk
    for newer in ("2.13.1", "2.14.0", "2.15.0", "3.0.0"):
        assert not torch_req.specifier.contains(newer)


def _third_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "stockdemo"}


def _closure(reqs: list[Requirement]) -> set[str]:
    """The distributions ``reqs`` bring in, theirs included (as installed in this environment)."""
    seen: set[str] = set()
    todo = [normalised(r.name) for r in reqs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in metadata.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(normalised(req.name))
    return seen


def test_every_module_the_package_imports_comes_with_a_declared_dependency():
    groups = declared()
    provided = _closure(groups[""] + groups["app"] + groups["notebook"])
    dists = metadata.packages_distributions()
    for path in sorted((ROOT / "stockdemo").rglob("*.py")):
        for module in _third_party_imports(path):
            owners = {normalised(d) for d in dists.get(module, [])}
            assert owners & provided, f"{path.relative_to(ROOT)} imports {module}, which no " \
                                      f"declared dependency brings ({owners or 'not installed'})"


@pytest.fixture(scope="module")
def wheel() -> Path:
    return start_package().result()[0]


@pytest.fixture(scope="module")
def venv() -> Path:
    """A virtual environment holding the wheel and what it declares (``harness.builds.build_venv``)."""
    return start_package().result()[1]


def test_the_wheel_holds_every_built_view_file_and_the_bundled_prices(wheel):
    built = [p for p in (ROOT / "stockdemo").rglob("*") if p.suffix in (".js", ".css")]
    built += list((ROOT / "static").glob("*.js"))
    assert {p.suffix for p in built} == {".js", ".css"}
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for path in built:
            # static/ is Streamlit's, beside app.py: the build writes its bundles into the package.
            inside = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT / "stockdemo") \
                else f"stockdemo/ui/graph_view/{path.name}"
            assert inside in names, f"{inside} is not in the wheel"
            assert z.read(inside) == path.read_bytes()
        assert z.read("stockdemo/data/stocks.csv.gz") == (ROOT / "stockdemo/data/stocks.csv.gz").read_bytes()
        assert not [n for n in names if n.startswith(("tests/", "bench/", "pages/", "frontend/"))]
        catalogs = sorted((ROOT / "stockdemo" / "locale").glob("*/LC_MESSAGES/*.mo"))
        assert len(catalogs) >= 16  # each area in Chinese and in Spanish
        for mo in catalogs:
            inside = mo.relative_to(ROOT).as_posix()
            assert inside in names and z.read(inside) == mo.read_bytes(), f"{inside}: not as built"


# Run by the fresh environment's Python, isolated (-I: no PYTHONPATH, no current directory).
USE = """
import json, pathlib, sys
import stockdemo
from stockdemo import RunConfig, run
from stockdemo.render.handout import SCRIPT, view_handout
from stockdemo.layout.steps import layout

config = RunConfig()
result = run(config)
picture = layout(result.graph, "auto", max_nodes=None)
pathlib.Path(sys.argv[1]).write_text(view_handout(picture, config=config), encoding="utf-8")
print(json.dumps({"file": stockdemo.__file__, "script": str(SCRIPT), "nodes": len(picture.nodes),
                  "predictions": result.predictions.tolist(), "path": sys.path}))
"""


def test_the_installed_wheel_runs_the_seed_and_writes_an_offline_handout_with_no_repository_beside_it(
        venv, wheel, tmp_path):
    handout = tmp_path / "seed.html"
    done = subprocess.run([str(venv / "bin" / "python"), "-I", "-c", USE, str(handout)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=True)
    out = json.loads(done.stdout)
    site = venv.resolve()
    assert Path(out["file"]).resolve().is_relative_to(site)
    assert not any(p and Path(p).resolve().is_relative_to(ROOT.resolve()) and
                   not Path(p).resolve().is_relative_to(site) for p in out["path"])

    # The seed snippet by hand, in this process, with torch alone.
    config = RunConfig()
    torch.manual_seed(config.seed)
    x = torch.randn(10, 5, 3)
    expected = StockPredictor(3, 10, 1, 1)(x).detach()
    torch.testing.assert_close(torch.tensor(out["predictions"]), expected)

    text = handout.read_text(encoding="utf-8")
    site_packages = Path(out["file"]).resolve().parent.parent
    script = Path(out["script"]).resolve().relative_to(site_packages)  # the view handout.py inlines
    with zipfile.ZipFile(wheel) as z:
        view_js = z.read(script.as_posix()).decode()
    assert _inline_script(view_js) in text
    assert "<script src" not in text  # nothing to fetch: the view is inline
    data = json.loads(re.search(r'<script type="application/json" id="stockdemo-data">(.*?)</script>',
                                text, re.S).group(1))
    assert len(data["nodes"]["id"]) == out["nodes"] == len(layout(run(config).graph, "auto",
                                                                  max_nodes=None).nodes)


# A model of the notebook's kind (a cell in a Python loop), shown and saved by the installed wheel.
LOOP_MODEL = """
import torch
from torch import nn


class Loop(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 4)

    def forward(self, x):
        h = torch.zeros(x.shape[0], 4)
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
        return h


torch.manual_seed(0)
model, x = Loop(), torch.randn(2, 5, 3)
"""
SHOW = LOOP_MODEL + """
import json, sys
import stockdemo
widget = stockdemo.show(model, x)
widget.save(sys.argv[1])
chinese = stockdemo.show(model, x, lang="zh-CN")
print(json.dumps({"widget": type(widget).__module__, "file": stockdemo.__file__,
                  "payload": json.loads(widget.payload), "chinese": json.loads(chinese.payload)["words"]}))
"""


def test_the_installed_wheel_shows_a_model_as_the_widget_in_english_and_in_chinese_and_saves_it(
        venv, tmp_path):
    saved = tmp_path / "loop.html"
    done = subprocess.run([str(venv / "bin" / "python"), "-I", "-c", SHOW, str(saved)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert Path(out["file"]).resolve().is_relative_to(venv.resolve())
    assert out["widget"] == "stockdemo.notebook"
    # The same model shown here, from the checkout: the same graph, node for node.
    from stockdemo.notebook import show

    namespace: dict = {}
    exec(compile(LOOP_MODEL, "<string>", "exec"), namespace)  # as python -c names it
    here = json.loads(show(namespace["model"], namespace["x"]).payload)
    assert out["payload"]["nodes"]["id"] == here["nodes"]["id"] and len(here["nodes"]["id"]) > 10
    assert "<script src" not in saved.read_text(encoding="utf-8")
    # Its words from the wheel's own compiled catalogs, as the checkout's say them.
    from stockdemo.i18n import speaking
    from stockdemo.render.words import view_words_json

    with speaking("zh_CN"):
        assert out["chinese"] == json.loads(view_words_json())
    assert out["chinese"]["text"]["fit"] == "全图"


IMPORT_ALL = """
import importlib, json, pkgutil
import stockdemo
failed = {}
for m in pkgutil.walk_packages(stockdemo.__path__, "stockdemo."):
    try:
        importlib.import_module(m.name)
    except ModuleNotFoundError as e:
        failed[m.name] = e.name
print(json.dumps(failed))
"""


def test_without_the_app_extra_only_the_streamlit_side_fails_to_import(venv, tmp_path):
    done = subprocess.run([str(venv / "bin" / "python"), "-I", "-c", IMPORT_ALL], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=True)
    failed = json.loads(done.stdout)
    app_only = _closure(declared()["app"]) - _closure(declared()[""])
    dists = metadata.packages_distributions()
    assert "stockdemo.render.handout" not in failed and "stockdemo.live.run" not in failed
    for module, missing in failed.items():
        owners = {normalised(d) for d in dists.get(missing.split(".")[0], [])}
        assert owners & app_only, f"{module} needs {missing}, which the core should have brought"
