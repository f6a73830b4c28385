"""A picture's part of the payload, encoded once for every reader, says its words in each
reader's language (stockdemo/render/said.py), and nothing else in it changes."""

from __future__ import annotations

import json

import pytest

from stockdemo.config import RunConfig
from stockdemo.i18n import later, later_n, speaking
from stockdemo.layout.views import picture_of_graph
from stockdemo.live.run import run
from stockdemo.render.payload import static_payload
from stockdemo.render.said import Said


def test_one_encoded_picture_reads_in_each_language_with_only_its_words_changed():
    picture = picture_of_graph(run(RunConfig()).graph, "auto")
    said, _ = static_payload(picture)
    read = {}
    for lang in ("en", "zh_CN", "es"):
        with speaking(lang):
            read[lang] = json.loads(said.text())
    assert read["en"]["caption"].startswith("38 nodes: 30 operations")
    assert read["zh_CN"]["caption"].startswith("38 个节点：30 个操作")
    assert read["es"]["caption"].startswith("38 nodos: 30 operaciones")
    assert [s for s in read["es"]["strings"] if s.startswith("entrada x")] == ["entrada x\n10×5×3"]
    assert "所有时间步一起" in read["zh_CN"]["frames"]["label"]
    for lang in ("zh_CN", "es"):  # the same drawing: positions, ids, edges, the key
        for field in ("graph", "edges", "width", "height"):
            assert read[lang][field] == read["en"][field]
        assert {k: v for k, v in read[lang]["nodes"].items() if k != "label"} == \
            {k: v for k, v in read["en"]["nodes"].items() if k != "label"}


def test_text_that_looks_like_a_hole_stays_text_and_each_word_is_said_where_it_is():
    value = {"code": ['"0"', "\u0000 0 \u0000", "{n} nodes"],
             "said": [later("scalar"), later_n("{n} edge", "{n} edges", 2), later("scalar")]}
    with speaking("es"):
        assert json.loads(Said.of(value).text()) == {
            "code": ['"0"', "\u0000 0 \u0000", "{n} nodes"], "said": ["escalar", "2 aristas", "escalar"]}
    assert len(Said.of(value).words) == 2  # a word met twice is said once


def test_a_value_that_is_neither_json_nor_words_is_refused():
    with pytest.raises(TypeError, match="object is not JSON"):
        Said.of({"x": object()})
