"""The translated pages, rendered in AppTest in Chinese and Spanish with their main
interactions: no English left a learner reads, links keep the language, and two sessions in
two languages at the same moment each get their own words (shared caches included).

Extending the check to a page is one line in ``TRANSLATED`` (docs/translating.md).
"""

from __future__ import annotations

import json
import re
import threading

import pytest
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT, graph_sent
from stockdemo.i18n import TAGS, catalog, speaking

# The Lab: each experiment opened (as its tab or a teacher opens it), each of its graphs drawn.
LAB = (("cut", "=set"), ("lab_graph", "=Longest window alone"), ("lab_graph", "=Packed"),
       ("lab_graph", "=Padded"), ("lab", "=Backward twice"), ("lab", "=Carried hidden state"),
       ("lab_graph", "=Detached"), ("lab", "=In-place change"), ("lab_graph", "=Out of place"),
       ("lab", "=NaN"), ("lab", "=no_grad"), ("lab", "=What the graph costs"))
# page file -> its main interactions, in order, after the first render: (key, "click" a button,
# "=VALUE" to set the widget, or the value kept in session state, to VALUE, or "KIND=VALUE" to
# pick VALUE in the KIND widget as a learner does, its callback run). Each state is read.
TRANSLATED: dict[str, tuple[tuple[str, str], ...]] = {
    "app.py": (("run_seed", "click"),),
    "pages/debugging.py": (),
    "pages/static_vs_dynamic.py": (("static_capture", "click"),),
    "pages/train.py": (("train_go", "click"),),
    "pages/lab.py": LAB,
    # the seed's run, then a ready-made edit's (its title, as the pill sends it)
    "pages/code.py": (("code_edit", "pills=skip connection"),),
    # a step whose question has choices, its answer revealed
    "pages/lesson.py": (("lesson_reveal", "click"),),
    # the preview of the lesson we ship (the page opens on it)
    "pages/author.py": (),
}
# English that is not language: names, units, code-like words a translation keeps.
NOT_LANGUAGE = {"pytorch", "streamlit", "python", "torch", "autograd", "dynamo", "relu", "tanh", "adam",
                "mse", "rmse", "mae", "csv", "fx", "lstm", "gru", "rnn", "nn", "cpu", "ma", "eager", "hook",
                "hooks", "forward", "backward", "export", "compile", "cond", "quandl", "wiki", "prices",
                "bokeh", "sampledata", "stockdemo", "utf", "date", "close", "open", "high", "low", "adj",
                "volume", "aapl", "ibm", "msft", "goog", "fb", "tensor", "grad", "fn", "id", "ids", "ms",
                "t", "h", "x", "l", "b", "a", "s", "e", "n/a", "english", "español", "for", "if", "while",
                "print"}
# Words only English uses (not Spanish, not names): one of them outside code is English left over.
ENGLISH_WORDS = set(
    "the of and is are was were with this that these those for from each every what which it its be "
    "by to you your how when why step steps graph graphs node nodes layer layers hidden state run runs "
    "training loss days day data model shows show press watch see here there not into than then "
    "after before while per only also can cannot will would should".split())
# Words of a page still made by areas translated in phase 2 (graph/, layout/): their owner wraps them.
PHASE_TWO = (re.compile(r"\d[\d,.]* nodes?\b[^.。]*"),  # layout's Picture.caption, graph's NodeCounts
             re.compile(r"  ·  .*$", re.M))  # a node's label in the node picker (graph/)
CODE = re.compile(r"`[^`]*`|```.*?```|\$[^$]*\$|:material/\w+:", re.S)
# A name with dots or underscores is code outside backticks too (a metric's plain-text label).
IDENTIFIER = re.compile(r"\b\w+(?:[._]\w+)+\b")


def english_left(text: str) -> list[str]:
    """The words of ``text`` (code spans, links' addresses and phase-two words taken out) that
    only English uses."""
    text = IDENTIFIER.sub(" ", CODE.sub(" ", re.sub(r"\]\([^)]*\)", "]", text)))
    for pattern in PHASE_TWO:
        text = pattern.sub(" ", text)
    return [w for w in re.findall(r"[A-Za-z][A-Za-z']*", text)
            if w.lower() in ENGLISH_WORDS and w.lower() not in NOT_LANGUAGE]


def texts(at: AppTest) -> list[str]:
    """Every text a learner reads on the page: elements' bodies, labels, help, options, tabs,
    metrics (inside the metric rows' markdown), and the plotly figures' titles, axes and legends."""
    found: list[str] = []

    def walk(node) -> None:
        children = getattr(node, "children", None)
        if children:
            for child in (children.values() if isinstance(children, dict) else children):
                walk(child)
            return
        proto = getattr(node, "proto", None)
        if proto is None or getattr(node, "type", "") in ("code", "html", "bidi_component"):
            return
        for field, value in proto.ListFields():
            if field.name in ("body", "label", "help", "placeholder", "text", "caption", "alt"):
                found.append(str(value))
            elif field.name == "options":
                found.extend(str(v) for v in value)
            elif field.name == "spec" and getattr(node, "type", "") == "plotly_chart":
                found.extend(figure_words(json.loads(value)))
    walk(at._tree)
    return [re.sub(r"<[^>]+>", " ", t) for t in found]


def figure_words(spec: dict) -> list[str]:
    layout = spec.get("layout", {})
    title = layout.get("title", {})
    words = [title.get("text", ""), title.get("subtitle", {}).get("text", "")]
    words += [v.get("title", {}).get("text", "") for k, v in layout.items()
              if k.startswith(("xaxis", "yaxis"))]
    words += [a.get("text", "") for a in layout.get("annotations", [])]
    words += [s.get("name", "") for s in layout.get("shapes", [])]
    words += [t.get("name", "") for t in spec.get("data", [])]
    return [w for w in words if w]


def render(page: str, lang: str, read=None) -> AppTest:
    """``page`` in ``lang`` after its main interactions, each state given to ``read``. The test's
    own thread speaks ``lang`` too: AppTest replays widgets' values through their format_func
    here, outside the script."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=180)
    at.query_params["lang"] = lang
    with speaking(lang):
        at.run()
        for key, action in TRANSLATED[page]:
            if read:
                read(at)
            kind, _, value = action.partition("=")
            if action == "click":
                at.button(key=key).click()
            elif kind:
                getattr(at, kind)(key=key).set_value(value)
            else:
                at.session_state[key] = action.removeprefix("=")
            at.run()
            assert not at.exception, (key, action, at.exception)
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
@pytest.mark.parametrize("page", list(TRANSLATED))
def test_a_translated_page_shows_no_english_a_learner_reads(page, lang, clear_caches):
    said: list[str] = []
    at = render(page, lang, lambda at: said.extend(texts(at)))
    said += texts(at)
    assert len(said) > 10, "the page drew almost nothing: the check would prove nothing"
    # English msgids this language says otherwise ("NaN" is the same in every language)
    msgids = {m for m, said in catalog(lang)._catalog.items() if m and said != m}
    left = {t[:90]: english_left(t) for t in said if english_left(t) or (t in msgids and t.strip())}
    shown = "\n".join(f"{k!r}: {v}" for k, v in left.items())
    assert not left, f"{page} in {lang} still says, in English:\n{shown}"


def test_the_english_detector_finds_an_untranslated_sentence_and_passes_code():
    assert english_left("Press **Train** and watch the two losses part")
    assert english_left("With retain_graph=True the graph stays")
    assert not english_left("按 **训练**，看 `loss.backward()` 与 AddmmBackward0")
    assert not english_left("用 retain_graph=True，fc.weight.grad 翻倍")
    assert not english_left("Pulsa **Entrenar** y mira cómo se separan las dos pérdidas")


def test_every_link_the_frame_makes_keeps_the_language_of_the_link():
    at = render("app.py", "es")
    links = [p.proto.query_string for p in at.get("page_link")]
    assert links and all("lang=es" in q for q in links)
    assert at.query_params["lang"] == ["es"] or at.query_params["lang"] == "es"


def test_a_browser_in_chinese_gets_chinese_and_links_stay_clean_of_its_own_language():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.context["locale"] = "zh-CN"
    at.run()
    assert at.title[0].value.endswith("动态图，现场运行")
    assert all("lang=" not in p.proto.query_string for p in at.get("page_link"))


def test_a_lang_that_names_no_language_is_said_once_and_the_page_stays_english():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["lang"] = "<script>"
    at.run()
    assert not at.exception
    assert any("is not one of en, zh_CN, es" in w.value for w in at.warning)
    assert at.title[0].value.endswith("Dynamic graphs, live")


def test_the_page_asks_the_browser_to_set_html_lang_to_the_sessions_language():
    at = render("app.py", "zh_CN")
    sent = [c for c in at.get("bidi_component") if c.proto.component_name.endswith("html_lang")]
    assert sent and json.loads(json.loads(sent[0].proto.json)) == {"lang": "zh-CN"}


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_the_graph_view_on_a_translated_page_is_sent_its_words_in_the_pages_language(lang, clear_caches):
    """The view's own words (stockdemo/render/words.py) come with its payload: Train's graph of
    one training step, after a run of training, carries the session's."""
    at = render("pages/train.py", lang)
    views = [graph_sent(c) for c in at.get("bidi_component") if c.proto.component_name.endswith("graph_view")]
    assert views, "no graph view drawn: the check would prove nothing"
    for view in views:
        assert view["words"]["lang"] == TAGS[lang]
        said = [*view["words"]["text"].values(), *(f for forms in view["words"]["counted"].values()
                                                    for f in forms.values())]
        assert not [w for w in said if english_left(re.sub(r"\{\w+\}", " ", w))], said
        assert not english_left(view["trace"]["status"]["forward"] if view["trace"] else "")


def test_two_sessions_in_two_languages_at_once_each_read_their_own_words_from_the_shared_caches(clear_caches):
    """Debugging's figures come from caches every session shares: each session's chart says
    its own language, whichever session built the cached figure first."""
    results: dict[str, list[str]] = {}

    def session(lang: str) -> None:
        at = render("pages/debugging.py", lang)
        results[lang] = [w for c in at.get("plotly_chart") for w in figure_words(json.loads(c.proto.spec))]

    threads = [threading.Thread(target=session, args=(lang,)) for lang in ("zh_CN", "es")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert any("隐状态" in w for w in results["zh_CN"]) and any("Estado oculto" in w for w in results["es"])
    assert not any("Estado oculto" in w for w in results["zh_CN"])
    assert not any("隐状态" in w for w in results["es"])
