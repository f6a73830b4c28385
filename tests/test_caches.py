"""The caches bounded in bytes (stockdemo/ui/caches.py's ``held``): budget, recency, one making per key."""

from __future__ import annotations

import gc
import sys
import threading

import numpy as np
import pytest

from stockdemo import heap
from stockdemo.config import RunConfig
from stockdemo.layout.steps import layout
from stockdemo.live.run import run
from stockdemo.ui import caches

MB = 2**20


@pytest.fixture
def budget(monkeypatch):
    caches.clear_held()
    monkeypatch.setattr(caches, "held_budget", lambda: 10 * MB)
    yield 10 * MB
    caches.clear_held()


def test_size_of_counts_an_arrays_buffer_and_a_shared_object_once():
    a = np.zeros(MB // 8)  # 1 MB
    assert MB <= heap.size_of(a) < 1.1 * MB
    assert MB <= heap.size_of([a, a, (a,)]) < 1.1 * MB
    assert 2 * MB <= heap.size_of([a, np.ones(MB // 8)]) < 2.2 * MB


def test_held_values_stay_within_the_byte_budget_least_recently_used_going_first(budget):
    made = []

    @caches.held(max_entries=100)
    def megabytes(n: int, tag: int) -> np.ndarray:
        made.append(tag)
        return np.zeros(n * MB // 8)

    for tag in range(6):
        megabytes(3, tag)
        assert caches.held_status()["bytes"] <= budget + 3.1 * MB  # the budget, plus the value just made
    assert caches.held_status()["bytes"] <= budget
    megabytes(3, 5)  # the newest is still held: not made again
    assert made == list(range(6))
    megabytes(3, 0)  # the oldest went first
    assert made == [*range(6), 0]


def test_a_value_bigger_than_the_budget_is_kept_alone_until_the_next(budget):
    @caches.held(max_entries=100)
    def big(tag: int) -> np.ndarray:
        return np.zeros(12 * MB // 8)

    big(1)
    assert caches.held_status()["values"] == 1
    big(2)
    assert caches.held_status()["values"] == 1 and caches.held_status()["bytes"] < 13 * MB


def test_each_function_keeps_at_most_its_entries(budget):
    @caches.held(max_entries=2)
    def small(tag: int) -> int:
        return tag

    for tag in range(5):
        small(tag)
    assert caches.held_status()["values"] == 2


def test_sessions_asking_at_once_make_a_value_once_and_an_exception_is_not_kept(budget):
    calls, release = [], threading.Event()

    @caches.held(max_entries=8)
    def slow(tag: int) -> str:
        calls.append(tag)
        assert release.wait(10)  # the making lasts until every session has asked
        if tag < 0:
            raise ValueError("no")
        return f"v{tag}"

    out = []
    threads = [threading.Thread(target=lambda: out.append(slow(1))) for _ in range(8)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join()
    assert out == ["v1"] * 8 and calls == [1]
    for _ in range(2):
        with pytest.raises(ValueError):
            slow(-1)
    assert calls == [1, -1, -1]


def test_a_payload_counts_its_index_of_ids_and_goes_at_the_next_one_once_its_picture_is_gone(budget):
    first = layout(run(RunConfig(seq_len=30)).graph, "auto", max_nodes=None)
    text, index = caches.cached_static_payload(first)
    assert caches._static_bytes == len(text) + sys.getsizeof(index) > len(text)
    del first, text, index
    gc.collect()
    second = layout(run(RunConfig(seq_len=31)).graph, "auto", max_nodes=None)
    text, index = caches.cached_static_payload(second)
    assert len(caches._STATIC) == 1  # the first picture's entry could never match again
    assert caches._static_bytes == len(text) + sys.getsizeof(index)


def test_the_payloads_bytes_come_out_of_what_held_may_keep(budget):
    caches._static_bytes = 4 * MB  # as if the kept payloads took 4 of the 10 MB

    @caches.held(max_entries=100)
    def megabytes(tag: int) -> np.ndarray:
        return np.zeros(2 * MB // 8)

    for tag in range(5):
        megabytes(tag)
    assert caches.held_status()["bytes"] <= 6 * MB < caches.held_status()["bytes"] + 2 * MB + MB // 8


def test_room_for_a_value_as_large_as_its_last_is_made_before_it_is_made(budget):
    held_while_making = []

    @caches.held(max_entries=100)
    def megabytes(tag: int) -> np.ndarray:
        held_while_making.append(caches.held_status()["bytes"])
        return np.zeros(3 * MB // 8)

    for tag in range(6):
        megabytes(tag)
    assert held_while_making[0] == 0
    assert max(held_while_making[1:]) <= 7 * MB  # 10 MB, less the 3 MB about to be made
    assert caches.held_status()["values"] == 3  # as many kept as before: 9 of the 10 MB


def test_the_values_take_half_of_what_caching_may_cost_the_heap_around_them_the_rest(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_CACHE_MB", "40")
    assert caches.held_budget() == 20 * MB
    status = caches.held_status()
    assert (status["budget"], status["for_values"]) == (40 * MB, 20 * MB)
