"""The stage's socket (stockdemo/ui/stage_route.py) without a browser: what a message from the
browser may be, and the payload it gets back, checked against torch's own run of those settings.

No Streamlit server here: every session counts as connected (``compat.alive``), and a seat is
put in place as the stage's run would leave it.
"""

from __future__ import annotations

import json

import pytest

from stockdemo import RunConfig, run
from stockdemo.config import CELL, SEQ_LEN
from stockdemo.graph.diff import graph_diff
from stockdemo.ui import stage_route
from stockdemo.ui.stage import STAGE_KNOBS


@pytest.fixture
def seat():
    """A session's seat at the defaults, its last run drawn nothing yet (its first move is new)."""
    token = "tok-" + "x" * 20
    base = {k: v for k, v in RunConfig().__dict__.items() if k not in {knob.name for knob in STAGE_KNOBS}}
    stage_route.SEATS.put(token, stage_route._Seat("session", base, "auto", False, 0,
                                                  f"/_stockdemo/stage?s={token}", None))
    yield token
    stage_route.SEATS.drop(token)


def move(**sent) -> str:
    return json.dumps(sent)


@pytest.mark.parametrize("text", [
    None, "", "not json", "[1, 2]", "42", move(seq_len=6), move(seq_len=6, req=True),
    move(seq_len=6, req=-1), move(seq_len=6, req=2**53), move(seq_len=6, req=1.5), move(seq_len=6, req="3"),
    move(seq_len=6, req=1, pad="x" * stage_route.MAX_MESSAGE),  # cut at the limit: no longer JSON
])
def test_a_message_that_is_no_move_is_refused(seat, text):
    assert stage_route.read_move(seat, text) is None


def test_a_move_for_a_token_without_a_seat_is_refused(seat):
    assert stage_route.read_move("another-token", move(seq_len=6, req=1)) is None


def test_each_value_goes_through_its_knobs_parser_and_the_rest_of_the_settings_are_the_seats(seat):
    got = stage_route.read_move(seat, move(seq_len=10**9, cell="evil()", hidden_size="7", req=3,
                                           batch_size=999, seed="x"))
    assert got.values["seq_len"] == SEQ_LEN.parse(["1000000000"])[0] == SEQ_LEN.high
    assert got.values["cell"] == CELL.default and got.values["hidden_size"] == 7
    assert got.req == 3
    # Only the stage's knobs come from the browser: batch and seed are the session's run's.
    assert got.config == RunConfig(seq_len=SEQ_LEN.high, hidden_size=7)


def test_an_answer_is_the_graph_torch_records_for_the_move_and_what_it_added(seat):
    stage_route.answer(stage_route.read_move(seat, move(seq_len=6, req=1)))
    got = json.loads(stage_route.answer(stage_route.read_move(seat, move(seq_len=7, req=2))))
    assert got["stage"]["req"] == 2 and got["stage"]["direct"] == f"/_stockdemo/stage?s={seat}"
    assert [c["value"] for c in got["stage"]["controls"] if c["name"] == "seq_len"] == [7]
    before, after = run(RunConfig(seq_len=6)).graph, run(RunConfig(seq_len=7)).graph
    assert sorted(got["nodes"]["id"]) == sorted(n.id for n in after.nodes)
    # Ringed as new: what torch's graph at T = 7 has and T = 6's lacks (the seat's last answer).
    added = {n.id for n in graph_diff(before, after).added_nodes}
    assert {got["nodes"]["id"][i] for i in got["new"]} == added
    figures = {f["label"]: f for f in got["stage"]["figures"]}
    assert figures["Graph nodes"]["delta"] == len(after.nodes) - len(before.nodes)
    # The seat keeps what it served, for the session to take at its next run.
    assert stage_route.SEATS.get(seat).served == (RunConfig(seq_len=7), 2)
