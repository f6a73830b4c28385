"""The Lab in the reader's language: one report, made once and shared by every session, says its
words, numbers and charts in each reader's language; the open experiment is kept and linked
by its English name whatever language its tab speaks, so links and a class's teacher work
across languages; its table's names and words are said per reader."""

from __future__ import annotations

import pyarrow as pa
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT, metrics
from stockdemo import lab
from stockdemo.config import LAB_TAB
from stockdemo.i18n import speaking, tr
from stockdemo.lab.figures import report
from stockdemo.ui.elements import said

PAGE = str(ROOT / "pages" / "lab.py")


def test_one_shared_report_says_its_words_and_numbers_in_each_readers_language():
    shared = report(lab.twice(lab.BreakConfig()))
    said_by = {}
    for lang in ("en", "zh_CN", "es"):
        with speaking(lang):
            said_by[lang] = (str(shared.headline), [str(v) for _, v, _ in shared.metrics],
                             str(shared.graphs[0].caption))
    assert said_by["en"][0].startswith("One forward pass, then `loss.backward()` twice")
    assert said_by["zh_CN"][0].startswith("一次前向传播，然后调用两次 `loss.backward()`")
    assert said_by["es"][0].startswith("Un pase hacia adelante y luego `loss.backward()` dos veces")
    size = shared.metrics[1][1]  # the bytes saved before backward(), e.g. 14.9 KB / 14,9 KB
    with speaking("es"):
        assert str(size) == str(size).replace(".", ",") and "," in str(size)
    nodes = shared.metrics[0][1]
    assert said_by["zh_CN"][2] == f"两次调用都要遍历的图：{nodes} 个节点"
    assert shared.graphs[0].label == "The graph"  # the picker's and the link's name stays English


def test_one_shared_chart_says_its_title_axes_and_legend_per_reader():
    figure = report(lab.carried_state(lab.DetachConfig())).figures[0][0]
    with speaking("zh_CN"):
        zh = figure.to_dict()
    with speaking("es"):
        es = figure.to_dict()
    assert zh["layout"]["title"]["text"] == "每个批量的损失背后的图"
    assert es["layout"]["xaxis"]["title"]["text"] == "lote"
    assert [t["name"] for t in es["data"]][:2] == ["arrastrado: nodos", "separado: nodos"]
    assert figure.data[0].name == "carried: nodes"  # as a plotly object, English


def open_lab(lang: str, **params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["lang"] = lang
    for key, value in params.items():
        at.query_params[key] = value
    with speaking(lang):
        at.run()
    assert not at.exception, at.exception
    return at


def test_a_link_in_english_opens_its_experiment_in_chinese_and_keeps_the_english_name():
    at = open_lab("zh_CN", lab="Backward twice")
    assert at.session_state[LAB_TAB.name] == "Backward twice"
    assert at.query_params[LAB_TAB.name] in ("Backward twice", ["Backward twice"])
    assert "反向传播前保存的" in metrics(at)  # Backward twice's metrics, in Chinese


def test_a_link_naming_an_experiment_in_chinese_opens_it_in_spanish():
    with speaking("zh_CN"):
        title = tr("Carried hidden state")
    assert title != "Carried hidden state"
    at = open_lab("es", lab=title)
    assert at.session_state[LAB_TAB.name] == "Carried hidden state"
    assert "Nodos en el lote 6, arrastrado" in metrics(at)


def test_a_teachers_experiment_set_by_its_english_name_opens_in_a_students_language():
    """What class mode does for a following student (ui/classmode/follow.py): the English name
    in the session; the tab the student sees is titled in the student's language."""
    at = open_lab("es")
    at.session_state[LAB_TAB.name] = "NaN"
    with speaking("es"):
        at.run()
    assert "Varianzas negativas" in metrics(at)
    assert at.session_state[LAB_TAB.name] == "NaN"  # still what the teacher's names, not "NaN" said


def test_a_shared_tables_names_and_words_are_said_and_its_numbers_and_code_kept():
    table = pa.table({"moment": ["after forward", "2012-01-03", "torch.no_grad()"], "nodes": [39, 40, 41]})
    with speaking("es"):
        shown = said(table)
    assert shown.column_names == ["momento", "nodos"]
    assert shown.column("momento").to_pylist() == [
        "tras el pase hacia adelante", "2012-01-03", "torch.no_grad()"]
    assert shown.column("nodos").to_pylist() == [39, 40, 41]
