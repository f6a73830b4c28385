"""What Streamlit Community Cloud reads from the repository, checked offline: Pipfile and packages.txt.

Community Cloud installs Python packages from the first dependency file it finds (a
Pipfile before requirements.txt) and Debian packages from the root's packages.txt.
The Pipfile carries requirements.txt's exact pins, with torch from PyTorch's CPU-only
index; requirements.txt stays as this machine installs it (docs/hosting.md, "On
Streamlit Community Cloud").
"""

from __future__ import annotations

import re
import tomllib
from urllib.parse import urlsplit

from packaging.requirements import Requirement

from harness.helpers import ROOT

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def requirement_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            [spec] = req.specifier
            pins[req.name] = str(spec)
    return pins


def test_the_pipfile_pins_exactly_what_requirements_txt_pins_with_torch_from_the_cpu_index():
    pipfile = tomllib.loads((ROOT / "Pipfile").read_text())
    sources = {s["name"]: s["url"] for s in pipfile["source"]}
    assert all(urlsplit(url).scheme == "https" for url in sources.values())
    packages = {name: spec if isinstance(spec, str) else spec["version"]
                for name, spec in pipfile["packages"].items()}
    assert packages == requirement_pins()  # the same packages, every one pinned the same
    torch = pipfile["packages"]["torch"]
    assert sources[torch["index"]] == CPU_INDEX
    # Only torch comes from PyTorch's index; everything else from the default (first) source.
    assert [n for n, s in pipfile["packages"].items() if isinstance(s, dict) and "index" in s] == ["torch"]
    assert pipfile["source"][0]["url"] == "https://pypi.org/simple"
    assert Requirement(f"torch{torch['version']}").specifier.contains("2.13.0+cpu")


def test_packages_txt_names_debian_packages_and_the_sandboxs_libseccomp():
    lines = [line.strip() for line in (ROOT / "packages.txt").read_text().splitlines() if line.strip()]
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", line) for line in lines), lines
    assert "libseccomp2" in lines  # pyseccomp loads libseccomp.so.2: without it the sandbox is off
