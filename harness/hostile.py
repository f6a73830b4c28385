"""Hostile programs (tests/hostile/*.py): what each must end in, read from its header, and the
check of a run against it; the few that also run inside the image and the cluster.

Each program says in its header what it tries, what must happen, and its ``# expect:``
line: ``STATUSES[:DETAILS] WORDS``, alternatives separated by ``|`` (tests/test_sandbox_hostile.py
runs every one through the page's call and the command line).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import torch

from harness.autograd import ops_by_type
from harness.helpers import ROOT
from stockdemo.sandbox import SEED_CODE, Limits
from stockdemo.sandbox.limits import SPEC

HOSTILE = sorted((ROOT / "tests" / "hostile").glob("*.py"))
SLACK_S = 2.0  # past the wall-clock limit, for the parent to notice and report


@dataclass(frozen=True)
class Expect:
    statuses: tuple[str, ...]
    details: tuple[str, ...]  # a limit's name, or a crash's signal
    words: tuple[str, ...]


def expectation(path: Path) -> Expect:
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    assert any(h.startswith("# Tries: ") for h in header), f"{path.name}: no '# Tries:' line"
    assert any(h.startswith("# Must: ") for h in header), f"{path.name}: no '# Must:' line"
    [line] = [h for h in header if h.startswith("# expect: ")]
    kinds, words = line.removeprefix("# expect: ").split(" ", 1)
    statuses, _, details = kinds.partition(":")
    return Expect(tuple(statuses.split("|")), tuple(filter(None, details.split("|"))),
                  tuple(words.split("|")))


def seed_ops_here() -> dict[str, int]:
    """The seed's ops by type, run here, outside the sandbox, as torch itself records them."""
    namespace: dict = {}
    torch.manual_seed(0)
    exec(compile(SEED_CODE, "seed", "exec"), namespace)
    return ops_by_type(namespace["predictions"])


def check(run: dict, expect: Expect, elapsed: float, name: str) -> None:
    limits = Limits.from_dict(run["limits"])
    error = run["error"] or {}
    message = run["message"].lower()
    assert run["status"] in expect.statuses, f"{name}: {run['status']}: {message}"
    if expect.details and run["status"] in ("limit", "crash"):
        assert (error["limit"] or error["type"]) in expect.details, f"{name}: {error}"
    assert any(w.lower() in message for w in expect.words), f"{name}: {message!r} lacks {expect.words}"
    if run["status"] == "limit":
        title = SPEC[error["limit"]].title if error["limit"] in SPEC else error["limit"]
        assert f"{title} limit".lower() in message, f"{name}: the limit is not named: {message}"
    if error.get("limit") == "cpu_s":
        assert run["cpu_s"] <= limits.cpu_s + 0.5
    assert elapsed <= limits.wall_s + SLACK_S, f"{name}: {elapsed:.1f} s"


# A fork, a socket (to the app's own port in the container) and an endless loop.
IN_CONTAINER = {"fork_os_fork": {}, "socket_tcp_localhost": {"__PORT__": "8501"}, "loop_infinite": {}}


# ``python -m stockdemo code FILE...`` in the container, its files written from the JSON on stdin.
CODE_FILES = ("import json, os, runpy, sys, tempfile\n"
              "folder = tempfile.mkdtemp()\n"
              "files = [os.path.join(folder, name + '.py') for name in json.loads(sys.argv[1])]\n"
              "for file, source in zip(files, json.load(sys.stdin)):\n"
              "    with open(file, 'w') as f:\n"
              "        f.write(source)\n"
              "sys.argv = ['stockdemo', 'code', *files]\n"
              "runpy.run_module('stockdemo', run_name='__main__', alter_sys=True)\n")


def run_in_container(exec_prefix: list[str], env: dict[str, str]) -> tuple[int, set[str], dict[str, dict]]:
    """The seed and the IN_CONTAINER programs through one ``python -m stockdemo code FILE...`` in a
    running container (``exec_prefix``: ``podman exec -i -w /app NAME``), as
    tests/test_sandbox_hostile.py's command line does: each file its own sandboxed run
    -> (the process's exit, the names its errors say failed, name -> its JSON line)."""
    sources = {"seed": SEED_CODE}
    for name, values in IN_CONTAINER.items():
        text = (ROOT / "tests" / "hostile" / f"{name}.py").read_text()
        for key, value in values.items():
            text = text.replace(key, value)
        sources[name] = text
    done = subprocess.run([*exec_prefix, "python", "-c", CODE_FILES, json.dumps(list(sources))],
                          input=json.dumps(list(sources.values())), env=env, capture_output=True,
                          text=True, timeout=300)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(sources), f"{len(lines)} JSON lines for {len(sources)} files: {done.stderr}"
    failed = {m[1] for m in re.finditer(r"^\S+/(\w+)\.py: ", done.stderr, re.M)}
    return done.returncode, failed, {Path(line["file"]).stem: line for line in lines}


def check_container_runs(exit_code: int, failed: set[str], runs: dict[str, dict]) -> None:
    """The seed runs with the ops torch records here; each hostile program is stopped as outside,
    and the command line exits 1 naming those, and only those, as failed."""
    seed = runs["seed"]
    assert seed["status"] == "ok", seed["message"]
    assert seed["ops_by_type"] == seed_ops_here()
    assert (exit_code, failed) == (1, set(IN_CONTAINER))
    for name in IN_CONTAINER:
        result = runs[name]
        check(result, expectation(ROOT / "tests" / "hostile" / f"{name}.py"), result["seconds"], name)
