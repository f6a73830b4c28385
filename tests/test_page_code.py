"""The "Your code" page through AppTest: the seed and its graph, each ready-made edit, links,
the operator's switch, an error from torch.

Every graph the page sends is checked against autograd itself: the ops by type of the
view's payload equal a plain walk of ``grad_fn.next_functions`` from ``predictions``,
run here, outside the sandbox, on the same code.
"""

from __future__ import annotations

import base64
import zlib
from collections import Counter

import pytest
import torch
from streamlit.testing.v1 import AppTest

from harness.autograd import ops_by_type
from harness.helpers import ROOT, graph_sent, metrics, send_from_view, view_element
from harness.learners import LONG_LOOP, SHAPE_ERROR, here
from stockdemo.code.edits import EDITS, apply
from stockdemo.code.link import MAX_CODE_CHARS, code_to_link
from stockdemo.sandbox import OFF_MESSAGE, SEED_CODE

PAGE = str(ROOT / "pages" / "code.py")


def open_code(**params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def editor(at: AppTest) -> dict:
    """What the page sent the code editor (stockdemo/ui/code_editor.py's docstring)."""
    return graph_sent(view_element(at, "code_editor"))


def drawn_ops(at: AppTest) -> Counter:
    """The ops by type of the graph the page's view draws (one box per node: no fold)."""
    sent = graph_sent(view_element(at, "code_graph"))
    assert not sent["folds"]["node"], "a rolled picture: its boxes are not one per node"
    return Counter(sent["strings"][op] for op in sent["nodes"]["op"] if op >= 0)


def autograd_ops(source: str) -> Counter:
    """The same code run here: torch's own graph behind ``predictions``."""
    namespace, raised, _ = here(source)
    assert raised is None, raised
    return Counter(ops_by_type(namespace["predictions"]))


def run_in_editor(at: AppTest, code: str, n: int = 1) -> AppTest:
    """The learner pressed Run (or Ctrl+Enter) with ``code`` in the editor."""
    return send_from_view(at, key="code_editor", trigger={"run": {"code": code, "n": n}})


def test_the_page_opens_with_the_seed_and_the_graph_its_run_recorded():
    at = open_code()
    assert not at.exception, [e.message for e in at.exception]
    sent = editor(at)
    assert sent["doc"] == SEED_CODE and sent["base"] is None and sent["error"] is None
    assert sent["focus_line"] == SEED_CODE.splitlines().index("    def forward(self, x):") + 1
    assert drawn_ops(at) == autograd_ops(SEED_CODE)
    namespace, _, printed = here(SEED_CODE)
    assert sent["printed"] == printed  # print(predictions): the same numbers as here
    assert metrics(at)["Output shape"] == str(tuple(namespace["predictions"].shape))
    # torch's own nodes, and the two the view draws as the Playground does: the data
    # (input_data) where it enters, and the output
    assert metrics(at)["Graph nodes"] == str(sum(autograd_ops(SEED_CODE).values()) + 2)
    assert "code" not in at.query_params  # the seed needs no link


@pytest.mark.parametrize("name", list(EDITS))
def test_each_ready_made_edit_shows_its_diff_and_the_graph_autograd_records_for_it(name):
    at = open_code()
    edit = EDITS[name]
    at.pills(key="code_edit").set_value(edit.title).run()
    assert not at.exception, [e.message for e in at.exception]
    source = apply(edit)
    sent = editor(at)
    assert (sent["doc"], sent["base"]) == (source, SEED_CODE)  # shown as a diff against the seed
    assert drawn_ops(at) == autograd_ops(source)
    assert sent["lesson"] == edit.lesson  # over the code it explains
    assert at.query_params["code"] == code_to_link(source)  # the edit is in the link
    assert at.pills(key="code_edit").value is None  # the same pill again is a click


def test_a_run_of_the_learners_own_code_drops_the_edits_diff_and_keeps_the_editors_text():
    at = open_code()
    at.pills(key="code_edit").set_value(EDITS["while"].title).run()
    source, doc_key = apply(EDITS["while"]), editor(at)["doc_key"]
    at = run_in_editor(at, source)  # the edit run as it is: still its diff against the seed
    assert (editor(at)["base"], editor(at)["doc_key"]) == (SEED_CODE, doc_key)
    at = run_in_editor(at, LONG_LOOP, n=2)  # pasted over it: the learner's own code
    assert not at.exception, [e.message for e in at.exception]
    sent = editor(at)
    assert sent["base"] is None and sent["lesson"] == ""  # an editor opened again paints no seed red
    assert sent["doc_key"] == doc_key  # the browser keeps what the learner typed, its undo too
    assert sent["doc"] == LONG_LOOP  # what an editor opened again starts from


def test_the_skip_connections_new_add_node_is_the_one_marked_new():
    at = open_code()
    at.pills(key="code_edit").set_value(EDITS["skip"].title).run()
    sent = graph_sent(view_element(at, "code_graph"))
    added = autograd_ops(apply(EDITS["skip"])) - autograd_ops(SEED_CODE)
    assert added == Counter({"AddBackward0": 1})
    assert [sent["strings"][sent["nodes"]["op"][i]] for i in sent["new"]] == ["AddBackward0"]


def test_a_link_reopens_its_code_and_its_graph():
    source = apply(EDITS["attention"]).replace("torch.manual_seed(0)", "torch.manual_seed(3)")
    at = open_code(code=code_to_link(source))
    assert not at.exception and not at.warning
    assert editor(at)["doc"] == source
    assert drawn_ops(at) == autograd_ops(source)


@pytest.mark.parametrize("link, words", [
    (code_to_link(SEED_CODE)[:-9], "could not be read"),  # cut short
    ("A" + code_to_link(SEED_CODE)[1:], "could not be read"),  # changed
    ("not base64 at all!", "could not be read"),
    (base64.urlsafe_b64encode(zlib.compress(b"x = 1\n" * MAX_CODE_CHARS, 9)).decode().rstrip("="),
     "longer than"),
    ("x" * 13_000, "longer than"),
])
def test_a_tampered_or_oversized_link_says_so_and_shows_the_seed(link, words):
    at = open_code(code=link)
    assert not at.exception, [e.message for e in at.exception]
    assert any(words in w.value for w in at.warning), [w.value for w in at.warning]
    assert editor(at)["doc"] == SEED_CODE
    assert drawn_ops(at) == autograd_ops(SEED_CODE)


def test_the_operator_turning_code_off_makes_the_page_say_so(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_CODE", "off")
    at = open_code()
    assert not at.exception
    assert [i.value for i in at.info] == [OFF_MESSAGE]
    # no editor, no graph: nothing runs (the one component left sets the page's <html lang>)
    assert [c for c in at.get("bidi_component") if not c.proto.component_name.endswith("html_lang")] == []


def test_a_run_that_fails_shows_torchs_message_and_marks_the_learners_line():
    at = run_in_editor(open_code(), SHAPE_ERROR)
    assert not at.exception, [e.message for e in at.exception]
    _, raised, printed = here(SHAPE_ERROR)
    line = SHAPE_ERROR.splitlines().index("        return self.fc(x)") + 1
    assert [e.value for e in at.error] == [f"{type(raised).__name__}: {raised}"]
    sent = editor(at)
    assert sent["error"] == {"line": line, "message": f"{type(raised).__name__}: {raised}"}
    assert sent["printed"] == printed == "before the error\n"  # printed before the error, kept
    assert sent["ran"] == 1 and sent["status"] == f"Failed on line {line}: RuntimeError."
    assert at.query_params["code"] == code_to_link(SHAPE_ERROR)
    # Fixed and run again: the graph is back, the mark gone.
    fixed = SHAPE_ERROR.replace("nn.Linear(4, 1)", "nn.Linear(3, 1)")
    at = run_in_editor(at, fixed, 2)
    assert not at.error and editor(at)["error"] is None
    assert drawn_ops(at) == autograd_ops(fixed)


def test_a_click_on_a_rolled_box_draws_every_iteration_and_a_forged_one_is_ignored():
    at = open_code(code=code_to_link(LONG_LOOP))
    folds = graph_sent(view_element(at, "code_graph"))["folds"]
    sent = graph_sent(view_element(at, "code_graph"))
    assert len(folds["node"]) == 1 and folds["unrolled"] == []  # T 40 is over the budget: rolled
    fold = sent["nodes"]["id"][folds["node"][0]]
    assert folds["iterations"] == [38]  # the first and the last step drawn, the 38 between rolled
    at = send_from_view(at, key="code_graph", unroll=["not/a-fold", fold])
    assert not at.exception, [e.message for e in at.exception]
    sent = graph_sent(view_element(at, "code_graph"))
    assert sent["folds"]["node"] == [] and sent["folds"]["unrolled"] == [fold]
    assert drawn_ops(at) == autograd_ops(LONG_LOOP)  # every step, one box per node
    # Another code: its own picture, rolled again.
    at = run_in_editor(at, LONG_LOOP.replace("torch.manual_seed(0)", "torch.manual_seed(1)"))
    assert len(graph_sent(view_element(at, "code_graph"))["folds"]["node"]) == 1


SGD_LOOP = SEED_CODE + """
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    predictions = model(input_data)
    loss = predictions.pow(2).mean()
    print(f"step {step}: loss {loss.item():.4f}")
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def walks_at_each_backward(source: str, monkeypatch) -> list[Counter]:
    """The code run here, with torch's own walk of each graph just before its backward() frees it."""
    walks: list[Counter] = []
    backward = torch.Tensor.backward

    def walked(self, *args, **kwargs):
        walks.append(Counter(ops_by_type(self)))
        return backward(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(torch.Tensor, "backward", walked)
        namespace, raised, _ = here(source)
    assert raised is None, raised
    return walks


def test_a_training_loop_shows_every_graph_it_built_each_as_torch_walked_it_at_its_backward(monkeypatch):
    at = run_in_editor(open_code(), SGD_LOOP)
    assert not at.exception, [e.message for e in at.exception]
    walks = walks_at_each_backward(SGD_LOOP, monkeypatch)
    assert len(walks) == 5
    [stepper] = at.select_slider
    assert "This run built 5 graphs, each freed by its backward()" in stepper.label
    assert stepper.value == 4  # the last graph first
    assert drawn_ops(at) == walks[4]
    for i in range(4):
        at = stepper.set_value(i).run()
        [stepper] = at.select_slider
        assert drawn_ops(at) == walks[i], f"graph {i + 1}"
        assert metrics(at)["Graph nodes"] == str(sum(walks[i].values()) + 2)  # + x and the loss


def test_a_graph_that_changes_size_each_iteration_is_drawn_at_each_size(monkeypatch):
    source = SEED_CODE + """
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(1, 4):
    out = model(input_data[:, :step + 2])
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    at = run_in_editor(open_code(), source)
    walks = walks_at_each_backward(source, monkeypatch)
    [stepper] = at.select_slider
    assert "then the graph of predictions" in stepper.label
    assert len(stepper.options) == 4 and stepper.value == 3  # three freed graphs, then predictions
    sizes = []
    for i in range(3):
        at = stepper.set_value(i).run()
        [stepper] = at.select_slider
        assert drawn_ops(at) == walks[i]
        sizes.append(sum(drawn_ops(at).values()))
    assert sizes[0] < sizes[1] < sizes[2]  # a longer sequence each iteration: a bigger graph
