"""Your code's own socket (stockdemo/ui/code_route.py): a Run it answers, with no script run, is
the picture the page's run then draws for the same Run, and what is not a Run is refused.

The page runs in AppTest with the socket offered (``STOCKDEMO_CODE_SOCKET`` set, as
deploy/replica_app.py sets it); the seat its run leaves answers a Run as the socket does;
then the same Run goes through the page, as the editor sends it a frame later. The boxes
ringed as new are checked against autograd's own walk of the two programs.
"""

from __future__ import annotations

import json
from collections import Counter
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from harness.autograd import ops_by_type
from harness.helpers import ROOT, graph_sent, send_from_view, view_element
from harness.learners import SHAPE_ERROR, here
from stockdemo.code.edits import EDITS, apply
from stockdemo.sandbox import SEED_CODE
from stockdemo.ui import code_route, keys

PAGE = str(ROOT / "pages" / "code.py")
SOCKET = "/_stockdemo/code"


@pytest.fixture
def offered(monkeypatch):
    monkeypatch.setenv(code_route.SOCKET_ENV, SOCKET)


def opened() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=120).run()


def direct_of(at: AppTest) -> str | None:
    """The socket's address the page handed its editor."""
    return graph_sent(view_element(at, "code_editor"))["direct"]


def token_of(at: AppTest) -> str:
    address = direct_of(at)
    assert address is not None and address.startswith(SOCKET + "?"), address
    return parse_qs(urlsplit(address).query)["s"][0]


def ask(token: str, code: str, n: int) -> dict:
    """A Run as the editor sends it, answered as the socket answers it."""
    request = code_route.read_request(token, json.dumps({"code": code, "n": n}))
    assert request is not None
    return json.loads(code_route.answer(request))


def torch_ops(source: str) -> Counter:
    namespace, raised, _ = here(source)
    assert raised is None, raised
    return Counter(ops_by_type(namespace["predictions"]))


def ringed_ops(payload: dict) -> list[str]:
    return [payload["strings"][payload["nodes"]["op"][i]] for i in payload["new"]]


def test_a_run_on_the_socket_is_the_payload_the_pages_run_then_sends_with_the_same_new_box(offered):
    at = opened()
    token = token_of(at)
    assert graph_sent(view_element(at, "code_graph"))["stage"]["served"] is True
    skip = apply(EDITS["skip"])
    answer = ask(token, skip, 1)
    assert answer["n"] == 1 and answer["status"].startswith("Ran in ")
    served = answer["view"]
    added = torch_ops(skip) - torch_ops(SEED_CODE)
    assert added == Counter({"AddBackward0": 1})
    assert ringed_ops(served) == ["AddBackward0"]  # the seed's graph was on screen
    assert served["stage"]["ran"] == 1 and served["stage"]["served"] is True

    at = send_from_view(at, key="code_editor", trigger={"run": {"code": skip, "n": 1}})
    assert graph_sent(view_element(at, "code_graph")) == served  # the view leaves it as drawn
    assert at.session_state[keys.CODE_TEXT] == skip and token_of(at) == token


def test_a_second_run_on_the_socket_rings_what_the_page_rings_after_the_same_two_runs(offered):
    skip, detach = apply(EDITS["skip"]), apply(EDITS["detach"])
    token = token_of(opened())
    ask(token, skip, 1)  # on screen now, though the page has not caught up
    served = ask(token, detach, 2)["view"]
    at = opened()
    for n, code in enumerate((skip, detach), 1):
        at = send_from_view(at, key="code_editor", trigger={"run": {"code": code, "n": n}})
    page = graph_sent(view_element(at, "code_graph"))
    assert served["stage"]["ran"] == 2 and served["graph"] == page["graph"]
    assert 0 < len(served["new"]) < len(served["nodes"]["id"])
    assert served["new"] == page["new"]


def test_a_run_that_builds_no_graph_or_is_too_long_is_left_to_the_page(offered):
    token = token_of(opened())
    assert ask(token, SHAPE_ERROR, 1) == {"n": 1, "view": None}
    assert ask(token, "#" * (code_route.MAX_CODE + 1), 2) == {"n": 2, "view": None}


NOT_RUNS = {"empty": "", "text": "not json", "list": "[1, 2]", "no-n": '{"code": "x"}',
            "code-not-text": '{"code": 3, "n": 1}', "n-bool": '{"code": "x", "n": true}',
            "n-zero": '{"code": "x", "n": 0}', "n-float": '{"code": "x", "n": 1.5}',
            "n-huge": '{"code": "x", "n": 9007199254740993}',
            "oversize": json.dumps({"code": "x" * (code_route.MAX_MESSAGE + 1), "n": 1})}


def test_what_is_not_a_run_is_refused(offered):
    token = token_of(opened())
    assert code_route.read_request(token, json.dumps({"code": "x", "n": 1})) is not None
    taken = [name for name, text in NOT_RUNS.items() if code_route.read_request(token, text) is not None]
    assert taken == []
    assert code_route.read_request("no-such-seat", json.dumps({"code": "x", "n": 1})) is None


def test_no_socket_without_the_server_offering_one_nor_while_the_replay_is_on(monkeypatch):
    at = opened()
    assert direct_of(at) is None and graph_sent(view_element(at, "code_graph"))["stage"]["served"] is False
    monkeypatch.setenv(code_route.SOCKET_ENV, SOCKET)
    at.session_state[keys.REPLAY] = True  # the view's own replay toggle, on: the page draws the trace
    at.run()
    assert direct_of(at) is None
    assert graph_sent(view_element(at, "code_graph"))["trace"] is not None
