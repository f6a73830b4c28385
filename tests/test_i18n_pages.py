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

from harness.helpers import ROOT, cold_caches, graph_sent
from stockdemo.i18n import TAGS, catalog, speaking
from stockdemo.lessons import builtin_lesson

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
    # The Playground: a run with other settings (T, layers, a rolled view), then each panel opened.
    "pages/playground.py": (("seq_len", "=12"), ("num_layers", "=2"), ("panel", "=Ops by type"),
                            ("panel", "=Graph size against T"), ("panel", "=Share this run"),
                            ("seq_len", "=60")),
    # The teacher's view: the class started (code, link, key, the question picker), question 1 open.
    "pages/classroom.py": (("class_start", "click"), ("class_open", "click")),
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
CODE = re.compile(r"`[^`]*`|```.*?```|\$[^$]*\$|:material/\w+:", re.S)
# A name with dots or underscores is code outside backticks too (a metric's plain-text label).
IDENTIFIER = re.compile(r"\b\w+(?:[._]\w+)+\b")


def english_left(text: str) -> list[str]:
    """The words of ``text`` (code spans and links' addresses taken out) that only English uses."""
    text = IDENTIFIER.sub(" ", CODE.sub(" ", re.sub(r"\]\([^)]*\)", "]", text)))
    return [w for w in re.findall(r"[A-Za-z][A-Za-z']*", text)
            if w.lower() in ENGLISH_WORDS and w.lower() not in NOT_LANGUAGE]


def texts(at) -> list[str]:
    """Every text a learner reads on the page (an AppTest), or inside one of its blocks: elements'
    bodies, labels, help, options, tabs, metrics (inside the metric rows' markdown), and the
    plotly figures' titles, axes and legends."""
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
    walk(getattr(at, "_tree", at))
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


@pytest.fixture(scope="module")
def rendered():
    """-> ``get(page, lang)``: the page in ``lang`` after its main interactions, from cold caches,
    rendered once for the module -> (the AppTest, every text it showed along the way). The tests
    that read one page's render share it (Train's render trains a model)."""
    done: dict[tuple[str, str], tuple[AppTest, list[str]]] = {}

    def get(page: str, lang: str) -> tuple[AppTest, list[str]]:
        if (page, lang) not in done:
            cold_caches()
            said: list[str] = []
            at = render(page, lang, lambda at: said.extend(texts(at)))
            done[page, lang] = at, said + texts(at)
        return done[page, lang]
    return get


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
@pytest.mark.parametrize("page", list(TRANSLATED))
def test_a_translated_page_shows_no_english_a_learner_reads(page, lang, rendered):
    said = rendered(page, lang)[1]
    assert len(said) > 10, "the page drew almost nothing: the check would prove nothing"
    # English msgids this language says otherwise ("NaN" is the same in every language)
    msgids = {m for m, said in catalog(lang)._catalog.items() if m and said != m}
    left = {t[:90]: english_left(t) for t in said if english_left(t) or (t in msgids and t.strip())}
    shown = "\n".join(f"{k!r}: {v}" for k, v in left.items())
    assert not left, f"{page} in {lang} still says, in English:\n{shown}"


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_the_class_page_speaks_each_students_language_whatever_the_teachers(lang):
    """A teacher in English opens the lesson's question 1; a student whose page speaks ``lang``
    reads the question (the lesson's words, from the catalogs), its answer box and the class's
    own words in ``lang``, before and after answering: no English left."""
    desk = AppTest.from_file(str(ROOT / "pages/classroom.py"), default_timeout=120).run()
    desk.button(key="class_start").click().run()
    desk.button(key="class_open").click().run()
    assert not desk.exception and "Question 1 is **open**" in " ".join(m.value for m in desk.markdown)
    student = AppTest.from_file(str(ROOT / "pages/classroom.py"), default_timeout=120)
    student.query_params["class"] = desk.session_state["class_teacher"].code
    student.query_params["lang"] = lang
    with speaking(lang):
        said = texts(student.run())
        question = catalog(lang).gettext(builtin_lesson().steps[0].question)
        assert question != builtin_lesson().steps[0].question  # the lesson's words are translated
        assert any(re.sub(r"<[^>]+>", " ", question) in t for t in said), said  # as texts() reads it
        student.radio(key="class_choice_1").set_value(builtin_lesson().steps[0].ask.choices[0])
        next(b for b in student.button if "class_answer_form_1" in b.proto.id).click()
        said += texts(student.run())
    assert not student.exception, student.exception
    assert any(catalog(lang).gettext("Your answer: **{answer}**. Wait for the teacher's reveal.")
               .split("{answer}")[0] in t for t in said)  # the answer was taken
    left = {t[:90]: english_left(t) for t in said if english_left(t)}
    assert not left, f"the class page in {lang} still says, in English: {left}"


def keyed_block(node, key: str):
    """The block of ``node``'s tree drawn with ``key`` (``st.container(key=...)``), or None."""
    proto = getattr(node, "proto", None)
    if str(getattr(proto, "id", "")).endswith(f"-{key}"):
        return node
    children = getattr(node, "children", None) or {}
    for child in (children.values() if isinstance(children, dict) else children):
        if (found := keyed_block(child, key)) is not None:
            return found
    return None


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_the_teachers_gallery_speaks_the_teachers_language_and_shows_torchs_error_as_written(lang):
    """A teacher reading ``lang`` asks the .detach() challenge; two students' runs build one graph,
    one fails in torch, one draws nothing. The gallery's words are the teacher's language; the
    error is torch's own, grouped; only the check's sentence (the lessons' words) is left out."""
    from stockdemo.classroom import Failure, new_seat
    from stockdemo.classroom.challenges import CHALLENGES, shape_key
    from stockdemo.code.edits import EDITS, apply
    from stockdemo.sandbox import run_code
    from stockdemo.ui.classmode import session as class_session

    desk = AppTest.from_file(str(ROOT / "pages/classroom.py"), default_timeout=120).run()
    desk.button(key="class_start").click().run()
    teacher = desk.session_state["class_teacher"]
    room = class_session.class_room()
    room.ask(teacher, "detach", ".detach()", CHALLENGES["detach"].prompt, apply(EDITS["loop"]))
    solved = apply(EDITS["detach"])
    run = run_code(solved)
    message = "mat1 and mat2 shapes cannot be multiplied (10x3 and 4x10)"
    for error in (None, None, Failure("error", "RuntimeError", message, None, 14), Failure("none")):
        seat = new_seat()
        room.join(teacher.code, seat)
        room.submit(teacher.code, seat, solved if error is None else "x", error is None, "s",
                    shape_key(run.graph) if error is None else "none", error)
    at = AppTest.from_file(str(ROOT / "pages/code.py"), default_timeout=120)
    at.session_state["class_teacher"] = teacher
    at.query_params["lang"] = lang
    with speaking(lang):
        at.run()
        check = str(CHALLENGES["detach"].check.sentence)
    gallery = keyed_block(at._tree, "class_gallery")
    assert not at.exception and gallery is not None
    said = [t.replace(check, "") for t in texts(gallery)]
    assert catalog(lang).gettext("{n} · passes").format(n=2) in said  # one tile, two runs
    assert any(f"1: RuntimeError: {message}" in t for t in said)  # torch's words, as it wrote them
    left = {t[:90]: english_left(t) for t in said if english_left(t.replace(message, ""))}
    assert not left, f"the gallery in {lang} still says, in English: {left}"


def test_the_english_detector_finds_an_untranslated_sentence_and_passes_code():
    assert english_left("Press **Train** and watch the two losses part")
    assert english_left("With retain_graph=True the graph stays")
    assert not english_left("按 **训练**，看 `loss.backward()` 与 AddmmBackward0")
    assert not english_left("用 retain_graph=True，fc.weight.grad 翻倍")
    assert not english_left("Pulsa **Entrenar** y mira cómo se separan las dos pérdidas")


def test_every_link_the_frame_makes_keeps_the_language_of_the_link(rendered):
    at = rendered("app.py", "es")[0]
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


def test_the_page_asks_the_browser_to_set_html_lang_to_the_sessions_language(rendered):
    at = rendered("app.py", "zh_CN")[0]
    sent = [c for c in at.get("bidi_component") if c.proto.component_name.endswith("html_lang")]
    assert sent and json.loads(json.loads(sent[0].proto.json)) == {"lang": "zh-CN"}


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_the_graph_view_on_a_translated_page_is_sent_its_words_in_the_pages_language(lang, rendered):
    """The view's own words (stockdemo/render/words.py) come with its payload: Train's graph of
    one training step, after a run of training, carries the session's."""
    at = rendered("pages/train.py", lang)[0]
    views = [graph_sent(c) for c in at.get("bidi_component") if c.proto.component_name.endswith("graph_view")]
    assert views, "no graph view drawn: the check would prove nothing"
    for view in views:
        assert view["words"]["lang"] == TAGS[lang]
        said = [*view["words"]["text"].values(), *(f for forms in view["words"]["counted"].values()
                                                    for f in forms.values())]
        assert not [w for w in said if english_left(re.sub(r"\{\w+\}", " ", w))], said
        assert not english_left(view["trace"]["status"]["forward"] if view["trace"] else "")


def test_two_sessions_in_two_languages_each_read_their_own_words_from_the_shared_caches(clear_caches):
    """Debugging's figures come from caches every session shares: each session's chart says
    its own language, whichever session built the cached figure first.

    One after the other: AppTest swaps in a process-wide mock Runtime for each run and puts it
    back after, so two AppTests at once pull it from under each other ("Runtime hasn't been
    created!"). The test below says one shared figure from two threads at once.
    """
    results = {lang: [w for c in render("pages/debugging.py", lang).get("plotly_chart")
                      for w in figure_words(json.loads(c.proto.spec))]
               for lang in ("zh_CN", "es")}
    assert any("隐状态" in w for w in results["zh_CN"]) and any("Estado oculto" in w for w in results["es"])
    assert not any("Estado oculto" in w for w in results["zh_CN"])
    assert not any("隐状态" in w for w in results["es"])


def test_one_shared_figure_said_by_two_sessions_at_once_gives_each_its_own_words():
    """Streamlit runs each session in a thread of one process: a cached figure's words are said
    in each thread's own language, however the two interleave."""
    from stockdemo import figures
    from stockdemo.config import RunConfig
    from stockdemo.live import inspection

    figure = figures.hidden_heatmap(inspection.inspect_run(RunConfig(), 1.0, "tanh"))
    results: dict[str, set[str]] = {}
    start = threading.Barrier(2)

    def session(lang: str) -> None:
        start.wait()
        with speaking(lang):
            results[lang] = {w for _ in range(200) for w in figure_words(figure.to_dict())}

    threads = [threading.Thread(target=session, args=(lang,)) for lang in ("zh_CN", "es")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert any("隐状态" in w for w in results["zh_CN"]) and any("Estado oculto" in w for w in results["es"])
    assert not any("Estado oculto" in w for w in results["zh_CN"])
    assert not any("隐状态" in w for w in results["es"])


def playground_view(at: AppTest) -> dict:
    return next(graph_sent(c) for c in at.get("bidi_component")
                if c.proto.component_name.endswith("graph_view"))


def picture_words(view: dict) -> list[str]:
    """The words a picture's payload carries (cached per picture) and its stage's, as sent."""
    strings = view["strings"]
    labels = [strings[i] for i in view["nodes"]["label"] if i >= 0]
    return [view["caption"], view["counts"]["summary"], *view["frames"]["label"], *labels,
            *view["stands_for"]["text"], *view["folds"]["span"], view["stage"]["change"],
            *(f["help"] or "" for f in view["stage"]["figures"])]


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_the_playgrounds_graph_says_its_caption_frames_boxes_and_change_in_the_language(lang, rendered):
    """The words inside the cached picture (the view's payload, which the page test does not
    read): a rolled run of 2 layers, its change from the first run, each said for the reader."""
    at = rendered("pages/playground.py", lang)[0]
    view = playground_view(at)
    assert view["view"] == "rolled" and view["stands_for"]["text"], "nothing rolled: it would prove little"
    said = picture_words(view)
    left = [w for w in said if english_left(re.sub(r"\{\w+\}", " ", w))]
    assert not left, left
    assert "input x" not in {w.split("\n")[0] for w in said}  # the input's box is words too


def test_two_sessions_in_two_languages_read_one_cached_picture_each_in_their_own_words(clear_caches,
                                                                                       monkeypatch):
    """One picture laid out for both (the layout is not redone to say it), each session's
    caption, frames and boxes in its own language, whichever session made it first."""
    from stockdemo.ui import caches

    laid_out: list[object] = []
    real = caches.picture_of_graph

    def counted(graph, view, **kw):
        laid_out.append(graph.meta.get("seq_len"))
        return real(graph, view, **kw)

    monkeypatch.setattr(caches, "picture_of_graph", counted)
    # What the stage keeps for good (every T at the defaults) an earlier test may have laid out.
    monkeypatch.setattr(caches, "_KEPT_RUNS", {})
    monkeypatch.setattr(caches, "_KEPT_PICTURES", {})
    views: dict[str, dict] = {}

    def session(lang: str) -> None:
        at = AppTest.from_file(str(ROOT / "pages/playground.py"), default_timeout=180)
        at.query_params.update({"lang": lang, "seq_len": "9"})
        with speaking(lang):
            at.run()
        views[lang] = playground_view(at)

    # One after the other on this thread: AppTest mounts the graph view through Streamlit's
    # runtime, which a thread of a test does not always see (see the Debugging test above).
    for lang in ("zh_CN", "es"):
        session(lang)
    assert laid_out.count(9) == 1, laid_out
    zh, es = views["zh_CN"], views["es"]
    assert zh["graph"] == es["graph"] and zh["nodes"]["x"] == es["nodes"]["x"]  # one picture
    assert "个节点" in zh["caption"] and "nodos" in es["caption"]
    assert "所有时间步一起" in zh["frames"]["label"] and "todos los pasos a la vez" in es["frames"]["label"]
    assert "输入 x\n10×9×3" in zh["strings"] and "entrada x\n10×9×3" in es["strings"]
    assert "nodos" not in zh["caption"] and "个节点" not in es["caption"]
