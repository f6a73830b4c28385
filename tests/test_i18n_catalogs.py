"""The catalogs and the language machinery: complete and current, the glossary's terms
every time, plurals per language, numbers per language, a language per context (never per
process), shared values said in each reader's language, the lessons' extractor."""

from __future__ import annotations

import re
import threading
import unicodedata
from pathlib import Path

import pytest

from harness.helpers import ROOT
from stockdemo import i18n
from stockdemo.config import SOURCE
from stockdemo.i18n import catalogs, later, later_n, speaking, tr, trn
from stockdemo.i18n.lessons import extract_lesson
from stockdemo.i18n.numbers import day, number, percent
from stockdemo.i18n.tags import language_of, parse_lang

GLOSSARY = ROOT / "docs" / "glossary.md"


def test_the_catalogs_are_complete_and_current():
    """0 untranslated, 0 fuzzy, nothing the code marks missing from a template, .mo compiled."""
    assert catalogs.problems() == []


def glossary(lang: str) -> list[tuple[str, str, list[str]]]:
    """(English, term, forbidden synonyms) rows of ``lang``'s table in docs/glossary.md."""
    section = GLOSSARY.read_text(encoding="utf-8").split(f"## {lang}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ")]
    return [(e.strip(), t.strip(), [f.strip() for f in bad.split(",") if f.strip()])
            for e, t, bad, _ in rows[1:]]


def translations(lang: str) -> list[tuple[str, str]]:
    """(msgid, translation) of every form of every message of ``lang``, code spans and
    placeholders taken out of both."""
    strip = re.compile(r"`[^`]*`|\{[^}]*\}")
    found = []
    for domain, _ in catalogs.DOMAINS:
        path = catalogs.po_path(lang, domain)
        for m in catalogs.read(path, lang) if path.exists() else ():
            if m.id:
                ids = m.id if isinstance(m.id, tuple) else (m.id,)
                said = m.string if isinstance(m.string, tuple) else (m.string,)
                found += [(strip.sub(" ", i), strip.sub(" ", s)) for i in ids[-1:] for s in said]
    return found


def words(term: str) -> re.Pattern:
    """A term as whole words, each also in its plural (nodo, nodos; paso de tiempo, pasos de
    tiempo; predicción, predicciones): match it against ``plain`` text."""
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(plain(w)) + "(?:s|es)?" for w in term.split())
                      + r"(?!\w)", re.I)


def plain(text: str) -> str:
    """Without accents: a Spanish plural moves or drops them (predicción, predicciones)."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_the_catalogs_say_each_glossary_term_every_time_and_never_a_synonym(lang):
    rows = glossary(lang)
    assert len(rows) >= 20
    wrong = []
    for english, term, forbidden in rows:
        said = re.compile(re.escape(term)) if lang == "zh_CN" else words(term)
        found = (lambda bad, text: bad in text) if lang == "zh_CN" else (
            lambda bad, text: words(bad).search(plain(text)))
        for msgid, text in translations(lang):
            shown = text if lang == "zh_CN" else plain(text)
            if words(english.replace("in place", "in-place")).search(msgid) or words(english).search(msgid):
                if not said.search(shown):
                    wrong.append(f"{english!r} -> {term!r} missing in {text[:60]!r}")
            wrong += [f"{bad!r} (say {term!r}) in {text[:60]!r}" for bad in forbidden if found(bad, text)]
    assert not wrong, "\n".join(wrong)


def test_a_forbidden_synonym_would_be_caught():
    pattern = words("paso de tiempo")
    assert pattern.search("Pasos de tiempo por ventana") and not pattern.search("paso temporal")
    assert words("predicción").search(plain("Ventanas de entrada y predicciones"))
    assert not words("tanda").search(plain("precio de cierre, estandarizado"))


def test_one_msgid_is_said_the_same_way_in_every_area_that_has_it():
    for lang in ("zh_CN", "es"):
        said: dict[str, str] = {}
        for domain, _ in catalogs.DOMAINS:
            path = catalogs.po_path(lang, domain)
            for m in catalogs.read(path, lang) if path.exists() else ():
                if m.id and not isinstance(m.id, tuple):
                    assert said.setdefault(m.id, m.string) == m.string, (lang, m.id)


def test_every_source_file_belongs_to_one_catalog_area():
    areas = {catalogs.domain_of(p.relative_to(ROOT).as_posix()) for p in catalogs.sources()}
    assert {"app", "core"} <= areas <= {name for name, _ in catalogs.DOMAINS}
    assert catalogs.domain_of("stockdemo/ui/classmode/bar.py") == "classroom"
    assert catalogs.domain_of("stockdemo/ui/frame.py") == "app"


def test_the_lesson_extractor_finds_the_learner_fields_and_leaves_code_and_ids():
    with (ROOT / "tests" / "data" / "lesson_fixture.toml").open("rb") as fp:
        found = [(line, message) for line, _, message, _ in extract_lesson(fp, (), (), {})]
    messages = [m for _, m in found]
    assert "How many blocks does a run of T = 6 record?" in messages
    assert {"5", "6", "One per layer", "Make only the last step reach the output."} <= set(messages)
    assert not {"pages/playground.py", "blocks", "path_cut"} & set(messages)
    assert not any("detach()  #" in m for m in messages)
    lines = Path(ROOT / "tests" / "data" / "lesson_fixture.toml").read_text().splitlines()
    assert all(m.splitlines()[0] in lines[n - 1] for n, m in found)


def test_plurals_follow_each_language_spanish_two_forms_chinese_one():
    with speaking("es"):
        assert trn("{n} point underflowed to exactly 0 (below float32's smallest number) and cannot be "
                   "drawn on a log scale.", "{n} points underflowed to exactly 0 (below float32's smallest "
                   "number) and cannot be drawn on a log scale.", 1).startswith("1 punto cayó")
        assert later_n("{n} tensor, shapes {shapes}", "{n} tensors, shapes {shapes}", 1234,
                       shapes="[]").__str__() == "1.234 tensores, formas []"
    with speaking("zh_CN"):
        one = trn("Node of this run's graph ({n} node)", "Node of this run's graph ({n} nodes)", 1)
        many = trn("Node of this run's graph ({n} node)", "Node of this run's graph ({n} nodes)", 5)
        assert one.replace("1", "5") == many == "本次运行的图中的节点（共 5 个节点）"
    assert i18n.catalog("es").plural(1) == 0 and i18n.catalog("es").plural(2) == 1
    assert i18n.catalog("zh_CN").plural(1) == i18n.catalog("zh_CN").plural(7) == 0


def test_numbers_and_dates_are_written_as_each_language_writes_them():
    said = {}
    for lang in i18n.LANGUAGES:
        with speaking(lang):
            said[lang] = (number(1234.5), number(0.25, 3), percent(0.523), day("2013-03-01"))
    assert said["en"] == ("1,234.5", "0.250", "52%", "Mar 1, 2013")
    assert said["es"] == ("1.234,5", "0,250", "52\xa0%", "1 mar 2013")
    assert said["zh_CN"][0] == "1,234.5" and said["zh_CN"][3] == "2013年3月1日"


def test_the_language_is_per_context_two_threads_speak_their_own_at_the_same_time():
    barrier, heard = threading.Barrier(2), {}

    def speak(lang: str) -> None:
        i18n.set_language(lang)
        barrier.wait()  # both set before either reads: a process-wide language would be the last one
        heard[lang] = tr("Seed")

    threads = [threading.Thread(target=speak, args=(lang,)) for lang in ("zh_CN", "es")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert heard == {"zh_CN": "种子", "es": "Semilla"}
    assert i18n.language() == "en"  # this thread was never told


def test_a_message_made_once_is_said_in_the_language_of_whoever_shows_it():
    made = later("{series}, seed {seed}", series=later("Random walk"), seed="7")
    with speaking("es"):
        assert str(made) == "Paseo aleatorio, semilla 7"
    with speaking("zh_CN"):
        assert f"{made}" == "随机游走，种子 7"
    assert made.english() == "Random walk, seed 7"


def test_a_shared_figure_is_said_per_reader_and_never_changed_by_one():
    from stockdemo.figures import gradient_figure, hidden_heatmap, loss_figure  # noqa: F401 (the cached kind)

    fig = loss_figure([])
    with speaking("zh_CN"):
        zh = fig.to_dict()["layout"]["title"]["text"]
    with speaking("es"):
        es = fig.to_dict()["layout"]["title"]["text"]
    assert (zh, es) == ("每轮的损失", "Pérdida por época")
    assert fig.layout.title.text == "Loss per epoch"  # the plotly object reads English


def test_a_link_made_in_one_language_is_read_in_any_other():
    with speaking("zh_CN"):
        chinese_label = SOURCE.show("synthetic")
    assert chinese_label == "合成序列（带种子）"
    with speaking("es"):
        assert SOURCE.parse(chinese_label) == ("synthetic", None)


@pytest.mark.parametrize("tag,lang", [("zh-CN", "zh_CN"), ("zh_Hans_SG", "zh_CN"), ("zh-TW", None),
                                      ("es-419", "es"), ("en-GB", "en"), ("fr-FR", None), ("中文", "zh_CN"),
                                      (["x", "es"], "es"), (b"es", "es"), (None, None), ("x" * 999, None)])
def test_a_language_tag_from_outside_is_read_or_refused_never_raises(tag, lang):
    assert language_of(tag) == lang
    parsed, message = parse_lang(tag)
    assert parsed == lang and (message is None) == (lang is not None or tag is None)
