"""A lesson in the reader's language: one live answer, computed once, said in each language with
the live run's numbers; a check's verdict on a real run and the parser's refusals said per reader
with their English and their code kept; a teacher's own words shown as typed."""

from __future__ import annotations

from stockdemo.config import RunConfig
from stockdemo.i18n import catalog, speaking
from stockdemo.i18n.numbers import number
from stockdemo.lessons import LessonError, builtin_lesson, parse_lesson
from stockdemo.lessons.said import said
from stockdemo.live.run import run
from stockdemo.sandbox import run_code


def nodes(**config: object) -> int:
    return run(RunConfig(**config)).graph.counts.nodes


def test_one_live_answer_is_said_in_each_language_with_the_live_runs_node_counts():
    step = builtin_lesson().steps[2]  # nodes gained from T = 5 to 6
    live = step.live_answer()  # what the shared cache keeps: Messages
    five, six = nodes(seq_len=5), nodes(seq_len=6)
    english = step.reveal()
    assert english.value == f"+{six - five}" and f"T = 5: {five} nodes. T = 6: {six} nodes." in english.detail
    assert said(live.detail, "zh_CN").startswith(f"T = 5：{five} 个节点。T = 6：{six} 个节点。")
    assert said(live.detail, "es").startswith(f"T = 5: {five} nodos. T = 6: {six} nodos.")
    assert said(live.label, "es") == "Nodos ganados, T 5 → 6"
    assert live.said("zh_CN").label == "增加的节点，T 5 → 6" and step.reveal() == english  # nothing kept


def test_a_number_in_an_answer_is_written_as_the_readers_language_writes_it():
    step = builtin_lesson().steps[7]  # the model against tomorrow = today: RMSE with three decimals
    live = step.live_answer()
    english = said(live.detail, "en")
    model = english.split("model ")[1].split(",")[0]  # 12.864, as English writes it
    with speaking("es"):
        spanish = number(float(model), 3)
    assert "." in model and spanish == model.replace(".", ",")
    assert f"modelo {spanish}" in said(live.detail, "es")


def test_a_checks_verdict_on_a_real_run_is_said_per_reader_and_its_english_kept():
    challenge = builtin_lesson().steps[8].challenge  # detach the hidden state: the starting code fails
    verdict = challenge.check.verdict(challenge.start, run_code)
    assert not verdict.passes
    english = str(verdict.reason)
    assert english == said(verdict.reason, "en") and "time step" in english
    assert "时间步" in said(verdict.reason, "zh_CN") and "paso de tiempo" in said(verdict.reason, "es")
    assert said(verdict.sentence, "es") != str(verdict.sentence)


def test_a_refused_lesson_keeps_its_code_and_english_and_is_said_per_reader():
    text = builtin_lesson().text.replace('page = "home"', 'page = "nowhere"', 1)
    try:
        parse_lesson(text)
    except LessonError as err:
        refused = err
    assert refused.code == "expected-page" and refused.key == "steps[0].page"
    assert refused.message.startswith("expected a page: home, ")
    assert str(refused).startswith(f"line {refused.line}, steps[0].page: expected a page")
    with speaking("es"):
        assert refused.said().startswith(f"Línea {refused.line}, steps[0].page: se esperaba una página: home")
    with speaking("zh_CN"):
        assert refused.said().startswith(f"第 {refused.line} 行，steps[0].page：应为一个页面：home")


def test_a_teachers_own_words_show_as_typed_and_ours_in_the_readers_language():
    ours = builtin_lesson().steps[0]
    assert catalog("es").gettext(ours.title) != ours.title
    assert said(ours.title, "es") == catalog("es").gettext(ours.title)
    own = "Mi propia pregunta, escrita por la docente"
    assert said(own, "zh_CN") == own and said("", "es") == "" and said(None) == ""
