"""The app's caches (stockdemo/ui/caches.py): its one byte budget, and the wrappers on it.
The budget itself is tests/test_lru.py's."""

from __future__ import annotations

import gc
import sys

import pytest

from stockdemo import heap
from stockdemo.config import RunConfig
from stockdemo.layout.picture import picture_bytes
from stockdemo.layout.steps import layout
from stockdemo.live.run import run
from stockdemo.lru import held_budget
from stockdemo.ui import caches

MB = 2**20


@pytest.fixture
def cold():
    caches.clear_held()
    yield
    caches.clear_held()


def test_a_picture_and_its_run_count_the_graph_once_between_them():
    result = run(RunConfig(seq_len=30))
    picture = layout(result.graph, "auto", max_nodes=None)
    together = heap.size_of((result, picture))  # each object once, as the heap holds them
    assert together <= picture_bytes(picture) + heap.size_of(result) < 1.1 * together
    assert heap.size_of(picture) + heap.size_of(result) > 1.3 * together  # the graph walked twice


def test_the_app_holds_its_values_within_the_hosts_budget_share():
    assert caches.held_status()["for_values"] == held_budget()


def test_a_payload_counts_its_index_of_ids_and_goes_at_the_next_one_once_its_picture_is_gone(cold):
    first = layout(run(RunConfig(seq_len=30)).graph, "auto", max_nodes=None)
    text, index = caches.cached_static_payload(first)
    assert caches.HELD.object_bytes == text.size + sys.getsizeof(index) > text.size
    assert caches.cached_static_payload(first)[0] is text  # kept: not made again
    del first, text, index
    gc.collect()
    second = layout(run(RunConfig(seq_len=31)).graph, "auto", max_nodes=None)
    text, index = caches.cached_static_payload(second)
    assert len(caches.HELD._objects) == 1  # the first picture's entry could never match again
    assert caches.HELD.object_bytes == text.size + sys.getsizeof(index)


def test_a_change_between_two_settings_is_worked_out_once_for_every_session(cold):
    before, after = RunConfig(seq_len=5), RunConfig(seq_len=6)
    a, b = run(before).graph, run(after).graph
    change = caches.cached_change(before, after, before_graph=a, after_graph=b)
    sentence, delta, added = change
    assert delta == b.counts.nodes - a.counts.nodes > 0 and len(added) > 0
    assert caches.cached_change(before, after, before_graph=run(before).graph,
                                after_graph=run(after).graph) is change  # kept, not worked out again
    record = caches.change_since({"config": before, "graph": a}, after, b)
    assert (record["change"], record["delta"], record["new"]) == (sentence, delta, added)


def test_a_run_the_wall_clock_stopped_is_not_kept_but_a_finished_one_is(cold, monkeypatch):
    """A wall-clock stop says as much about the box (a busy one starves the sandbox) as about the
    code: the next press runs the text again. A run that ended is the code's own: kept."""
    from stockdemo.sandbox import CodeRun, Limits
    from stockdemo.sandbox.protocol import CodeError

    calls = []

    def fake_run_code(source, **_):
        calls.append(source)
        slept = "sleep" in source
        stopped = CodeError("limit", "WallClockLimit", "stopped", None, "wall_s") if slept else None
        return CodeRun(Limits(), error=stopped)

    monkeypatch.setattr(caches, "run_code", fake_run_code)
    for _ in range(2):
        assert caches.cached_code_run("time.sleep(60)").error.limit == "wall_s"
        assert caches.cached_code_run("x = 1").ok
    assert calls == ["time.sleep(60)", "x = 1", "time.sleep(60)"]
