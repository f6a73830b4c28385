"""Lesson page through AppTest: every step's revealed answer is what a live run shows."""

import base64
import contextlib
import io
import zlib
from urllib.parse import urlencode

import pytest
import torch
from streamlit.testing.v1 import AppTest

from harness.autograd import grad_fns
from harness.helpers import ROOT, metric
from stockdemo import lab
from stockdemo import static_graphs as static
from stockdemo.config import STEP, RunConfig, TrainConfig, url_value
from stockdemo.i18n.numbers import significant
from stockdemo.lesson import STEPS
from stockdemo.lessons import code_answers, lesson_to_link, shipped_lesson
from stockdemo.lessons.schema import MAX_STEPS
from stockdemo.live import inspection
from stockdemo.live.run import build, run
from stockdemo.train import prices as data
from stockdemo.train import training as train

PAGE = str(ROOT / "pages" / "lesson.py")
BAD_LESSONS = sorted((ROOT / "tests" / "lessons" / "bad").glob("*.toml"))


def fresh() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=180)


def nodes(**changes) -> int:
    return run(RunConfig(**changes)).graph.stats["nodes"]


def trained() -> train.TrainResult:
    config = TrainConfig()
    dataset, _ = data.load_dataset(config)
    return train.run_training(dataset, config)


def check_grad_fn(value: str, detail: str) -> None:
    x, model = build(RunConfig())
    assert value == type(model(x).grad_fn).__name__ == "AddmmBackward0"
    ops = run(RunConfig()).graph.counts.operations  # the input and output are not written down
    assert f"last of the {ops} operations" in detail


def check_seed_shape(value: str, detail: str) -> None:
    result = run(RunConfig())
    assert value == str(tuple(result.predictions.shape)) == "(10, 1)"
    assert f"recorded {result.graph.stats['nodes']} nodes" in detail


def check_node_gain(value: str, detail: str) -> None:
    assert value == f"{nodes(seq_len=6) - nodes(seq_len=5):+d}"
    assert f"T = 5: {nodes(seq_len=5)} nodes. T = 6: {nodes(seq_len=6)} nodes." in detail


def check_blocks(value: str, detail: str) -> None:
    graph = run(RunConfig(num_layers=2)).graph
    blocks = {(n.layer, n.step) for n in graph.nodes if n.role == "step"}
    assert value == str(len(blocks)) == str(2 * 5)
    assert f"adds {nodes(num_layers=2, seq_len=6) - nodes(num_layers=2)} nodes" in detail


def check_fused_lstm(value: str, detail: str) -> None:
    assert value == f"{nodes(cell='lstm', seq_len=50) - nodes(cell='lstm', seq_len=5):+d}" == "+0"
    loop = f"{nodes(cell='lstm_loop', seq_len=5)} → {nodes(cell='lstm_loop', seq_len=50)} nodes"
    assert loop in detail


def check_recompiles(value: str, detail: str) -> None:
    capture = static.compile_capture(RunConfig(), (5, 6, 5))
    assert value == str(len(capture.graphs))
    assert f"({capture.recompiles} recompile)" in detail
    export = static.export_dynamic_seq_len(RunConfig())
    assert ("exported" if export.ok else f"failed with `{export.error_name}`") in detail


def check_vanishing(value: str, detail: str) -> None:
    ratio = inspection.inspect_run(RunConfig(seq_len=20)).vanishing_ratio
    assert ratio < 1 and value == f"{1 / ratio:,.0f}× smaller"
    assert f"first / last = {significant(ratio)}" in detail  # as the Debugging page writes it


def check_baseline(value: str, detail: str) -> None:
    rmse = trained().metrics["RMSE"]
    model, naive = rmse[train.MODEL_ROW], rmse[train.PERSISTENCE_ROW]
    assert value == ("Yes" if model < naive else "No: the baseline wins")
    assert f"model {model:.3f}, tomorrow = today {naive:.3f}" in detail


def check_padded_weeks(value: str, detail: str) -> None:
    model = lab.seeded_model("rnn", 10, 0)
    weeks = [torch.from_numpy(w.returns[:, None].copy()) for w in lab.cut_windows(lab.LengthsConfig())]
    alone = torch.cat([model(w[None]) for w in weeks])
    padded = model(torch.nn.utils.rnn.pad_sequence(weeks, batch_first=True))
    assert value == f"up to {(padded - alone).abs().max().item():.3g}"
    assert f"{sum(len(w) < 5 for w in weeks)} of {len(weeks)} weeks" in detail


def grad_fn_walk(source: str) -> tuple[int, int]:
    """The script run here (our own ready-made code, not a learner's), its ``predictions``'
    graph walked through torch's own ``next_functions`` -> (backward functions, Tanh among them)."""
    names: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, "<lesson>", "exec"), names)  # noqa: S102
    seen = grad_fns(names["predictions"])
    return len(seen), sum(type(fn).__name__ == "TanhBackward0" for fn in seen)


def check_cut_by_detach(value: str, detail: str) -> None:
    step = STEPS[8]
    walks = map(grad_fn_walk, (step.settings.source, step.challenge.answer))
    (whole_fns, whole_tanh), (kept_fns, kept_tanh) = walks
    assert (whole_tanh, kept_tanh) == (5, 1)  # torch's own walk: one step's block is left of five
    kept, whole = map(int, value.split(" of "))
    # The page's count adds the run's input and output boxes to torch's backward functions.
    assert (kept, whole) == (kept_fns + 2, whole_fns + 2)
    assert f"records {whole} nodes" in detail and f"detached at each step, {kept}" in detail


CHECKS = (check_grad_fn, check_seed_shape, check_node_gain, check_blocks, check_fused_lstm,
          check_recompiles, check_vanishing, check_baseline, check_cut_by_detach, check_padded_weeks)


def test_the_step_knob_reaches_every_step_of_the_longest_lesson_a_file_may_hold():
    assert len(STEPS) == len(CHECKS) <= STEP.high == MAX_STEPS and STEP.low == 1


def test_walking_every_step_reveals_the_live_runs_answer(clear_caches):
    at = fresh().run()
    for number, (step, check) in enumerate(zip(STEPS, CHECKS, strict=True), start=1):
        assert not at.exception
        assert f"Step {number} of {len(STEPS)}" in at.get("progress")[0].proto.text
        assert at.header[0].value == f"{number}. {step.title}"
        assert at.button(key="lesson_back").disabled == (number == 1)
        assert not at.metric, "the answer shows before the class was asked"
        link = f"({'/' if step.page == 'app.py' else '/' + step.page[6:-3]}"
        shown = {k: url_value(k, v) for k, v in step.query.items()}  # as the menus show them
        link += f"?{urlencode(shown)})" if step.query else ")"
        assert any(link in m.value for m in at.markdown), f"step {number} links to {link}"
        at.button(key="lesson_reveal").click().run()
        assert not at.exception
        (answer,) = at.metric
        check(answer.value, " ".join(m.value for m in at.markdown))
        if number < len(STEPS):
            at.button(key="lesson_next").click().run()
    assert at.button(key="lesson_next").disabled
    assert at.query_params["step"] == str(len(STEPS))


def test_a_link_opens_the_lesson_at_its_step_and_back_returns():
    at = fresh()
    at.query_params["step"] = "3"
    at.run()
    assert at.header[0].value == f"3. {STEPS[2].title}"
    at.button(key="lesson_back").click().run()
    assert at.header[0].value == f"2. {STEPS[1].title}"
    assert at.query_params["step"] == "2"


@pytest.mark.parametrize(("raw", "shown"), [("99", len(STEPS)), ("0", 1), ("two", 1)])
def test_a_bad_step_in_the_url_is_clamped_and_said(raw: str, shown: int):
    at = fresh()
    at.query_params["step"] = raw
    at.run()
    assert not at.exception
    assert at.header[0].value == f"{shown}. {STEPS[shown - 1].title}"
    assert any("Lesson step" in w.value for w in at.warning)


@pytest.mark.parametrize(("number", "page", "label", "shown"), [
    (3, "playground.py", "Graph nodes", lambda: f"{nodes(seq_len=6):,}"),
    (5, "playground.py", "Graph nodes", lambda: f"{nodes(cell='lstm', seq_len=50):,}"),
    (7, "debugging.py", "first / last",
     lambda: significant(inspection.inspect_run(RunConfig(seq_len=20)).vanishing_ratio)),
])
def test_the_linked_page_shows_the_number_the_lesson_revealed(number, page, label, shown):
    step = STEPS[number - 1]
    target = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=180)
    for key, value in step.query.items():
        target.query_params[key] = value
    target.run()
    assert not target.exception
    value = metric(target, label)
    assert value == shown() and value.replace(",", "") in step.reveal().detail


def test_back_on_the_lesson_without_a_step_in_the_url_resumes_where_the_class_was():
    at = fresh()
    at.query_params["step"] = "5"
    at.run()
    at.query_params.pop("step")  # the menu's Lesson link carries no ?step
    at.run()
    assert at.header[0].value == f"5. {STEPS[4].title}"
    assert at.query_params["step"] == "5"
    assert not at.warning


def test_the_your_turn_step_says_so_where_the_sandbox_cannot_run(monkeypatch):
    from stockdemo.sandbox import protocol

    def unavailable(source, *args, **kwargs):
        return protocol.CodeRun(protocol.Limits(), error=protocol.CodeError(
            "unavailable", "RuntimeError", "The sandbox cannot start on this server: no libseccomp."))

    monkeypatch.setattr(code_answers, "run_code", unavailable)
    answer = STEPS[8].reveal()
    assert answer.value == "not run here" and "no libseccomp" in answer.detail


def test_a_link_opens_a_shipped_lesson_by_name_and_its_steps_answer_from_its_file():
    at = fresh()
    at.query_params["lesson"] = "transformer-block"
    at.run()
    lesson = shipped_lesson("transformer-block")
    assert not at.exception and at.header[0].value == f"1. {lesson.steps[0].title}"
    assert f"Step 1 of {len(lesson.steps)}" in at.get("progress")[0].proto.text
    at.button(key="lesson_next").click().run()
    assert at.header[0].value == f"2. {lesson.steps[1].title}"
    assert at.query_params["lesson"] == "transformer-block"


def test_the_picker_opens_another_shipped_lesson_at_its_first_step_and_puts_it_in_the_link():
    at = fresh()
    at.query_params["step"] = "4"
    at.run()
    at.selectbox(key="lesson_picker").select("training-loop").run()
    lesson = shipped_lesson("training-loop")
    assert not at.exception and at.header[0].value == f"1. {lesson.steps[0].title}"
    assert at.query_params["lesson"] == "training-loop" and at.query_params["step"] == "1"


def test_every_refused_lesson_link_says_its_line_and_key_and_the_page_shows_ours():
    """A link carrying each bad lesson file: the page says why, at which line and key, and goes on
    with the built-in lesson; after all of them, a good link still opens its lesson."""
    at = fresh()
    for path in BAD_LESSONS:
        packed = base64.urlsafe_b64encode(zlib.compress(path.read_bytes(), 9)).decode().rstrip("=")
        at.query_params["lesson"] = packed  # as lesson_to_link packs text, here the file's own bytes
        at.query_params["step"] = "1"
        at.run()
        assert not at.exception, path.name
        assert at.header[0].value == f"1. {STEPS[0].title}", path.name
        assert any("the built-in lesson is shown" in w.value for w in at.warning), path.name
    good = shipped_lesson("training-loop")
    at.query_params["lesson"] = lesson_to_link(good.text)
    at.run()
    assert at.header[0].value == f"1. {good.steps[0].title}" and not at.warning
