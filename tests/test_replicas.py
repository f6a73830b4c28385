"""The replica roll (classroom/replicas.py) and the class push's rebalancing (ui/classmode/rebalance.py)."""

from __future__ import annotations

import time

import pytest
from streamlit.proto.ClientState_pb2 import ClientState

from stockdemo.classroom import Classroom, MemoryStore, new_seat, open_classroom, replicas
from stockdemo.ui.classmode import push as class_push
from stockdemo.ui.classmode import rebalance


@pytest.fixture(params=["memory", "redis"])
def store(request, redis_url):
    """One class store, as every replica of a deployment shares it."""
    return MemoryStore() if request.param == "memory" else open_classroom(redis_url).db


@pytest.mark.parametrize(("roll", "me", "hand_over"), [
    ({"r1": 60, "r2": 0}, "r1", 30),  # a replica came back empty: half the class goes there
    ({"r1": 60, "r2": 0}, "r2", 0),  # the empty one has nothing to give
    ({"r1": 30, "r2": 30}, "r1", 0),
    ({"r1": 36, "r2": 24}, "r1", 0),  # 6 over a share of 30: not worth 6 reloads
    ({"r1": 38, "r2": 22}, "r1", 8),
    ({"r1": 4, "r2": 1}, "r1", 0),  # a handful: never below 3 over
    ({"r1": 7, "r2": 1}, "r1", 3),
    ({"r1": 40, "r2": 10, "r3": 10}, "r1", 20),
    ({"r1": 60}, "r1", 0),  # alone: nowhere to go
    ({"r2": 0}, "r1", 0),  # not on the roll yet
])
def test_a_replica_hands_over_only_what_is_over_its_share_and_worth_a_reload(roll, me, hand_over):
    assert replicas.over_share(roll, me) == hand_over


def test_the_roll_counts_every_live_replica_and_forgets_one_that_stopped_saying(store, monkeypatch):
    r1, r2 = Classroom(store), Classroom(store)
    assert replicas.beat(r1, "r1", 12) == {"r1": 12}
    assert replicas.beat(r2, "r2", 0) == {"r1": 12, "r2": 0}
    later = time.time() + replicas.REPLICA_TTL_S + 1
    monkeypatch.setattr(time, "time", lambda: later)
    assert replicas.beat(r2, "r2", 3) == {"r2": 3}  # r1 was killed: gone from the roll
    assert "r1" not in store.hgetall(replicas.REPLICAS_KEY)  # and from the store


def test_a_replica_held_out_of_the_balancer_is_left_off_the_roll(store):
    """deploy/serve.py holds a restarted replica out for a while: a tab sent there would come back."""
    room = Classroom(store)
    replicas.beat(room, "r1", 60)
    store.hset(replicas.REPLICAS_HELD_KEY, "r2", "1")  # what serve.py says while it holds r2 out
    assert replicas.beat(room, "r2", 0) == {"r1": 60}
    store.hdel(replicas.REPLICAS_HELD_KEY, "r2")  # back in the balancer
    assert replicas.beat(room, "r2", 0) == {"r1": 60, "r2": 0}


def test_serve_names_the_held_out_key_the_roll_reads():
    from deploy import serve

    assert serve.REPLICAS_HELD_KEY == replicas.REPLICAS_HELD_KEY


class _Roll:
    """A roll read as given: ``live`` is what the other replicas said."""

    def __init__(self, name: str, live: dict[str, int]) -> None:
        self.name, self.live, self.tabs = name, live, 0

    def over_share(self) -> int:
        return replicas.over_share({**self.live, self.name: self.tabs}, self.name)


def _pusher(room: Classroom, others: dict[str, int]) -> class_push.Pusher:
    """A push thread driven by hand, on a roll where the other replicas said ``others``."""

    class Quiet(class_push.Pusher):
        def push(self, session_id, targets, state=None):  # no Streamlit runtime here: ``moving`` says who
            pass

    pusher = Quiet(room, autostart=False)
    pusher.roll = _Roll("r1", others)
    return pusher


def _beat(pusher: class_push.Pusher, over_for: float = rebalance.SUSTAINED_S) -> None:
    """One look of the push thread that is also its heartbeat (every HEARTBEAT_S), an excess
    over the share (if any) having lasted ``over_for`` seconds."""
    pusher.beat_at = -1e9
    pusher.over_since = time.monotonic() - over_for
    pusher.look()


def _join(pusher: class_push.Pusher, code: str, n: int, following: bool = True) -> list[str]:
    sessions = []
    for _ in range(n):
        sid = f"s{len(pusher.seats)}"
        pusher.watch(sid, code, "bar", ClientState(fragment_id=f"bar-{sid}"), seat=new_seat(),
                     following=following)
        sessions.append(sid)
    return sessions


def test_a_replica_over_its_share_asks_followers_to_move_once_each():
    room = Classroom(MemoryStore())
    teacher = room.start()
    pusher = _pusher(room, {"r2": 0})  # r2 came back with nobody
    followers = _join(pusher, teacher.code, 24)
    exploring = _join(pusher, teacher.code, 4, following=False)
    _beat(pusher)
    asked = list(pusher.moving)
    assert pusher.roll.tabs == 28
    assert len(asked) == 10  # 14 over the share of 14; at most a batch at once
    assert set(asked) <= set(followers)  # never a student exploring on their own
    assert not set(asked) & set(exploring)
    assert all(pusher.move_asked(sid) for sid in asked)  # each bar draws the move...
    assert not any(pusher.move_asked(sid) for sid in asked)  # ...once
    assert not pusher.move_asked(followers[-1] if followers[-1] not in asked else followers[0])
    _beat(pusher)
    assert list(pusher.moving) == asked  # the next batch waits until the roll has counted the first
    for sid in asked:  # ...which it has, a while later: the ten reloaded on r2
        pusher.watch(sid, None)
    pusher.roll.live = {"r2": 10}
    pusher.moved_at -= rebalance.MOVE_COOLDOWN_S
    _beat(pusher)
    assert len(pusher.moving) == 4 and not set(pusher.moving) & set(asked + exploring)  # the rest


def test_an_excess_that_does_not_last_moves_nobody():
    """While a class joins, the roll lags the balancer, which spreads the tabs itself."""
    room = Classroom(MemoryStore())
    teacher = room.start()
    pusher = _pusher(room, {"r2": 0})
    _join(pusher, teacher.code, 20)
    _beat(pusher, over_for=0.0)
    assert not pusher.moving
    _beat(pusher, over_for=rebalance.SUSTAINED_S - 0.5)
    assert not pusher.moving
    _beat(pusher)
    assert len(pusher.moving) == 10


def test_no_tab_is_moved_while_its_class_has_a_question_open():
    room = Classroom(MemoryStore())
    teacher = room.start()
    pusher = _pusher(room, {"r2": 0})
    _join(pusher, teacher.code, 20)
    room.open_question(teacher, 3)
    _beat(pusher)
    assert not pusher.moving
    room.reveal(teacher, "Nodes gained", "+4", "")
    _beat(pusher)
    assert len(pusher.moving) == 10


def test_a_replica_with_its_share_or_alone_moves_nobody():
    room = Classroom(MemoryStore())
    teacher = room.start()
    for others in ({"r2": 18}, {}):
        pusher = _pusher(room, others)
        _join(pusher, teacher.code, 20)
        _beat(pusher)
        assert pusher.roll.tabs == 20 and not pusher.moving
