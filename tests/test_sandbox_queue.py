"""The sandbox's queue for a class: sixty runs at once are queued, fairly, not refused.

Each session has at most one run in the sandbox at a time, the places go round the
sessions in turn, a waiting run's caller hears where it stands, and a run is refused only
for real overload (a wait longer than a learner waits, a session sending faster than
a person). Checked on pools of their own, with runs whose order of ending shows the turns.
"""

from __future__ import annotations

import threading
import time

import pytest

from harness.helpers import wait_until
from stockdemo.sandbox import SEED_CODE, Limits
from stockdemo.sandbox.pool import MAX_WAIT_S, PER_SESSION, CodePool

# A learner's program that holds its slot for {s} seconds: its sleep is the program under test.
HOLD = "import time\ntime.sleep({s})\npredictions = None\n"


@pytest.fixture(scope="module")
def pool_of_one():
    pool = CodePool(slots=1)
    assert pool.run(SEED_CODE, Limits()).ok  # the fork server is up before anything is timed
    yield pool
    pool.close()


@pytest.fixture
def one_place(pool_of_one):
    """One place, shared by this file's tests (a fork server's start is seconds), idle, and
    with no timing learned from another test."""
    until(lambda: pool_of_one.status()["running"] == pool_of_one.status()["waiting"] == 0)
    pool_of_one._times.clear()
    return pool_of_one


def send(pool: CodePool, source: str, who: str, ended: list, limits: Limits | None = None,
         heard: list | None = None) -> threading.Thread:
    """One session pressing Run, in a thread of its own; ``ended`` gets (who, status) when it ends."""
    def press() -> None:
        run = pool.run(source, limits or Limits(wall_s=30), who,
                       None if heard is None else heard.append)
        ended.append((who, run.status, run.message))

    thread = threading.Thread(target=press)
    thread.start()
    return thread


def until(condition, timeout: float = 60.0) -> None:
    wait_until(condition, timeout, "the pool getting there", interval=0.01)


def test_sixty_sessions_pressing_run_together_are_all_queued_and_all_run():
    pool = CodePool(slots=2)
    try:
        assert pool.run(SEED_CODE, Limits()).ok
        ended: list = []
        threads = [send(pool, SEED_CODE + f"print('student {i}')\n", f"student {i}", ended)
                   for i in range(60)]
        for thread in threads:
            thread.join()
        assert len(ended) == 60
        assert [m for _, status, m in ended if status != "ok"] == []
    finally:
        pool.close()


def test_the_places_go_round_the_sessions_so_a_second_run_waits_for_everyones_first(one_place):
    ended: list = []
    holder = send(one_place, HOLD.format(s=1.0), "holder", ended)
    until(lambda: one_place.status()["running"] == 1)
    threads = [send(one_place, SEED_CODE + "print('a1')\n", "a", ended)]
    until(lambda: one_place.status()["waiting"] == 1)
    threads.append(send(one_place, SEED_CODE + "print('a2')\n", "a", ended))
    until(lambda: one_place.status()["waiting"] == 2)
    for who in ("b", "c"):
        threads.append(send(one_place, SEED_CODE + f"print('{who}')\n", who, ended))
        until(lambda: one_place.status()["waiting"] == len(threads))
    for thread in [holder, *threads]:
        thread.join()
    assert [who for who, *_ in ended] == ["holder", "a", "b", "c", "a"]


def test_a_waiting_run_hears_how_many_go_before_it(one_place):
    ended: list = []
    heard: list[int] = []
    holder = send(one_place, HOLD.format(s=1.5), "holder", ended)
    until(lambda: one_place.status()["running"] == 1)
    first = [send(one_place, SEED_CODE + f"x = {i}\n", f"s{i}", ended) for i in range(2)]
    until(lambda: one_place.status()["waiting"] == 2)
    last = send(one_place, SEED_CODE + "x = 'me'\n", "me", ended, heard=heard)
    for thread in [holder, *first, last]:
        thread.join()
    assert heard and heard[0] == 2 and heard == sorted(heard, reverse=True)


def test_a_session_sending_faster_than_a_person_is_told_to_wait_for_its_runs(one_place):
    ended: list = []
    holder = send(one_place, HOLD.format(s=1.0), "fast", ended)
    until(lambda: one_place.status()["running"] == 1)
    threads = [send(one_place, SEED_CODE + f"x = {k}\n", "fast", ended) for k in range(PER_SESSION)]
    for thread in [holder, *threads]:
        thread.join()
    refused = [m for _, status, m in ended if status == "unavailable"]
    assert len(ended) == PER_SESSION + 1 and len(refused) == 1
    assert "Your previous runs are still waiting" in refused[0]


def queue_behind_a_holder(pool: CodePool, ended: list) -> list[threading.Thread]:
    """The pool learns that a run takes about 0.6 s; one run holds its place, three wait: a
    run sent now would wait about (3 + 1) x 0.6 = 2.4 s."""
    for _ in range(3):
        assert pool.run(HOLD.format(s=0.6), Limits(wall_s=5)).status == "error"  # predictions is None
    holder = send(pool, HOLD.format(s=2), "holder", ended)
    until(lambda: pool.status()["running"] == 1)
    waiting = [send(pool, HOLD.format(s=0.6), f"s{i}", ended) for i in range(3)]
    until(lambda: pool.status()["waiting"] == 3)
    return [holder, *waiting]


def test_a_wait_longer_than_the_runs_wall_clock_limit_is_queued_not_refused(one_place):
    # A class of sixty on a busy box waits longer than a run's 5 s: queued, told its place.
    ended: list = []
    others = queue_behind_a_holder(one_place, ended)
    heard: list = []
    late = send(one_place, SEED_CODE, "late", ended, Limits(wall_s=2), heard)
    for thread in [*others, late]:
        thread.join()
    assert [(who, status) for who, status, _ in ended if who == "late"] == [("late", "ok")]
    assert heard and heard[0] >= 3  # it heard the runs before it


def test_a_wait_longer_than_a_learner_waits_is_refused_at_once(one_place):
    ended: list = []
    others = queue_behind_a_holder(one_place, ended)
    one_place.max_wait_s = 2.0
    try:
        started = time.monotonic()
        refused = one_place.run(SEED_CODE, Limits(), "late")
        assert time.monotonic() - started < 0.5
    finally:
        one_place.max_wait_s = MAX_WAIT_S
    assert refused.status == "unavailable" and "would wait about" in refused.message, refused.message
    for thread in others:
        thread.join()
