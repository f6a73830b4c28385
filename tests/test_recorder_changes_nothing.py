"""The line recorder changes nothing a program does: every corpus program (tests/corpus/*.py),
run in this process with ``LineRecorder`` active around it and without, prints the same
text and gives ``predictions`` the same shape and ops by type."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.learners import CORPUS, run_here


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_a_program_prints_and_builds_the_same_graph_under_the_line_recorder(path: Path, tmp_path):
    source = path.read_text()
    (tmp_path / "plain").mkdir()
    (tmp_path / "recorded").mkdir()
    plain = run_here(source, tmp_path / "plain")
    recorded = run_here(source, tmp_path / "recorded", recorder=True)
    assert recorded.printed == plain.printed
    assert recorded.warnings == plain.warnings
    assert recorded.shape == plain.shape
    assert recorded.ops_by_type == plain.ops_by_type
