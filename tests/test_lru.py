"""The byte-budget cache (stockdemo/lru.py): bounded in bytes and in entries, least recently used
first, one making per key while others wait, exceptions not kept, the values per object."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

from stockdemo import heap, lru

MB = 2**20


@pytest.fixture
def cache() -> lru.ByteLRU:
    """A cache of its own with a 10 MB budget, 2.5 MB of which for values per object."""
    return lru.ByteLRU(lambda: 10 * MB, per_object_entries=4, per_object_share=0.25)


def test_size_of_counts_an_arrays_buffer_and_a_shared_object_once():
    a = np.zeros(MB // 8)  # 1 MB
    assert MB <= heap.size_of(a) < 1.1 * MB
    assert MB <= heap.size_of([a, a, (a,)]) < 1.1 * MB
    assert 2 * MB <= heap.size_of([a, np.ones(MB // 8)]) < 2.2 * MB


def test_size_of_leaves_out_the_objects_of_types_set_apart():
    a = np.ones(MB // 8)
    assert heap.size_of([a, "x"], apart=(np.ndarray,)) < 1000 < MB <= heap.size_of([a, "x"])


def test_a_cache_counts_its_values_by_the_size_it_is_given(cache):
    sized = []

    @cache.cache(max_entries=4, size=lambda value: sized.append(value) or 3 * MB)
    def make(n: int) -> list[int]:
        return [n]

    assert make(1) == [1] and make(1) == [1]
    assert sized == [[1]]  # sized once, when made
    assert cache.held_bytes == 3 * MB


def test_values_stay_within_the_byte_budget_least_recently_used_going_first(cache):
    made = []

    @cache.cache(max_entries=100)
    def megabytes(n: int, tag: int) -> np.ndarray:
        made.append(tag)
        return np.zeros(n * MB // 8)

    for tag in range(6):
        megabytes(3, tag)
        assert cache.status()["bytes"] <= 10 * MB + 3.1 * MB  # the budget, plus the value just made
    assert cache.status()["bytes"] <= 10 * MB
    megabytes(3, 5)  # the newest is still held: not made again
    assert made == list(range(6))
    megabytes(3, 0)  # the oldest went first
    assert made == [*range(6), 0]


def test_a_value_read_again_is_the_last_to_go(cache):
    made = []

    @cache.cache(max_entries=100)
    def megabytes(tag: int) -> np.ndarray:
        made.append(tag)
        return np.zeros(3 * MB // 8)

    for tag in range(3):
        megabytes(tag)
    megabytes(0)  # read again: 1 is now the least recently used
    megabytes(3)
    megabytes(0)
    assert made == [0, 1, 2, 3]
    megabytes(1)
    assert made == [0, 1, 2, 3, 1]


def test_a_value_bigger_than_the_budget_is_kept_alone_until_the_next(cache):
    @cache.cache(max_entries=100)
    def big(tag: int) -> np.ndarray:
        return np.zeros(12 * MB // 8)

    big(1)
    assert cache.status()["values"] == 1
    big(2)
    assert cache.status()["values"] == 1 and cache.status()["bytes"] < 13 * MB


def test_each_function_keeps_at_most_its_entries_and_its_own_oldest_goes(cache):
    @cache.cache(max_entries=2)
    def small(tag: int) -> int:
        return tag

    @cache.cache(max_entries=100)
    def other(tag: int) -> int:
        return tag

    other(0)
    for tag in range(5):
        small(tag)
    assert cache.status()["values"] == 3  # small's last two, and other's one


def test_threads_asking_at_once_make_a_value_once_and_an_exception_is_not_kept(cache):
    calls, release = [], threading.Event()

    @cache.cache(max_entries=8)
    def slow(tag: int) -> str:
        calls.append(tag)
        assert release.wait(10)  # the making lasts until every thread has asked
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
    assert cache.status()["values"] == 1


def test_keyword_arguments_are_not_part_of_the_key(cache):
    @cache.cache(max_entries=8)
    def greet(name: str, *, who: str) -> str:
        return f"{name} for {who}"

    assert greet("a", who="first") == "a for first"
    assert greet("a", who="second") == "a for first"


def test_room_for_a_value_as_large_as_its_last_is_made_before_it_is_made(cache):
    held_while_making = []

    @cache.cache(max_entries=100)
    def megabytes(tag: int) -> np.ndarray:
        held_while_making.append(cache.status()["bytes"])
        return np.zeros(3 * MB // 8)

    for tag in range(6):
        megabytes(tag)
    assert held_while_making[0] == 0
    assert max(held_while_making[1:]) <= 7 * MB  # 10 MB, less the 3 MB about to be made
    assert cache.status()["values"] == 3  # as many kept as before: 9 of the 10 MB


class Thing:
    """An object a value depends on alone (as a picture for its payload)."""


def test_a_value_per_object_is_made_once_while_the_object_lives(cache):
    made = []
    thing = Thing()
    size = len

    def make(obj: Thing) -> str:
        made.append(obj)
        return "x" * 100

    assert cache.per_object(thing, make, size) == "x" * 100
    cache.per_object(thing, make, size)
    assert made == [thing] and cache.object_bytes == 100


def test_a_value_per_object_goes_at_the_next_making_once_its_object_is_gone(cache):
    first = Thing()
    cache.per_object(first, lambda _: "x" * 100, len)
    del first
    gc.collect()
    assert cache.object_bytes == 100  # nothing gone yet: the next making looks
    cache.per_object(Thing(), lambda _: "y" * 30, len)
    assert (cache.object_bytes, len(cache._objects)) == (30, 1)


def test_values_per_object_keep_to_their_entries_and_their_share(cache):
    things = [Thing() for _ in range(6)]
    for thing in things:
        cache.per_object(thing, lambda _: "x", len)
    assert len(cache._objects) == 4  # per_object_entries
    cache.per_object(things[0], lambda _: "x" * (2 * MB), len)
    cache.per_object(things[1], lambda _: "x" * (2 * MB), len)
    assert cache.object_bytes <= 2.5 * MB  # a quarter of 10 MB: the newest alone
    assert list(cache._objects) == [id(things[1])]


def test_the_values_per_object_come_out_of_what_the_values_may_keep(cache):
    kept = Thing()  # alive to the end: its 2 MB stay spent
    cache.per_object(kept, lambda _: "y" * (2 * MB), len)

    @cache.cache(max_entries=100)
    def megabytes(tag: int) -> np.ndarray:
        return np.zeros(2 * MB // 8)

    for tag in range(5):
        megabytes(tag)
    assert cache.status()["bytes"] <= 8 * MB < cache.status()["bytes"] + 2 * MB + MB // 8


def test_clear_forgets_every_value(cache):
    @cache.cache(max_entries=8)
    def one(tag: int) -> int:
        return tag

    one(1)
    cache.per_object(Thing(), lambda _: "x", len)
    cache.clear()
    assert (cache.status()["values"], cache.status()["bytes"], cache.object_bytes) == (0, 0, 0)


def test_the_values_take_half_of_what_caching_may_cost_the_heap_around_them_the_rest(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_CACHE_MB", "40")
    assert lru.held_budget() == 20 * MB
    status = lru.ByteLRU().status()
    assert (status["budget"], status["for_values"]) == (40 * MB, 20 * MB)
