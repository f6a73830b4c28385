"""The JavaScript's words come from the catalogs: no English left in the graph view's and the
editor's sources, every key they ask for in the table (stockdemo/render/words.py) and every key
there asked for, each language's plural forms sent under the categories the browser's
``Intl.PluralRules`` picks, and the payloads carrying the reader's language."""

from __future__ import annotations

import json
import re

import pytest
from babel import Locale

from harness.helpers import ROOT
from harness.import_graph import js_modules
from stockdemo import RunConfig, run
from stockdemo.i18n import LANGUAGES, TAGS, catalog, speaking
from stockdemo.i18n.catalogs import DOMAINS, read, template_path
from stockdemo.layout.steps import layout
from stockdemo.render import words
from stockdemo.render.payload import view_payload

# Literals that look like words but are not language: the payload's node kinds, replay modes and
# fields (identifiers shared with Python), the editor's diff modes, an event's and an element's
# names, the keyboard's key names (KeyboardEvent.key), and a settle listener's state (protocol.js).
NOT_LANGUAGE = {"input", "output", "parameter", "op", "fold", "loop", "forward", "backward", "shape",
                "none", "click", "graph", "Enter", "Escape", "Arrow", "missing"}
PROSE_WORD = re.compile(r"^[A-Za-z]+[,.:;!?…]?$")
# A word in a msgid, not code (``.grad``, ``backward()``) nor a unit (KB).
ENGLISH_WORD = re.compile(r"(?<![.\w])[A-Za-z][a-z]+(?![\w(])")
# How the JavaScript names a key of the table: say/count's first argument, a data-say attribute,
# or a button's text and label options (frontend/graph_view/src/dom.js).
ASKED = (re.compile(r"\.(?:say|count)\(\s*\"(\w+)\""),
         re.compile(r"\"data-say(?:-label|-aria|-title)?\":\s*\"(\w+)\""),
         re.compile(r"dataset\.say(?:Label|Aria|Title)?\s*=\s*\"(\w+)\""),
         re.compile(r"\b(?:text|label):\s*\"(\w+)\""))


def unasked(source: str) -> str:
    """``source`` without the keys it asks the table for (``w.count("nodes", n)``): names, not
    words, even where another area has the same English as a msgid (the Lab's column "nodes")."""
    for pattern in ASKED:
        source = pattern.sub(lambda m: m[0].replace(f'"{m[1]}"', '""'), source)
    return source


def js_literals(source: str) -> list[str]:
    """Every string literal of a JavaScript source, comments skipped; a template literal gives
    the text between its ``${...}`` parts, each apart, and the literals inside them."""
    return _code(source, 0)[0]


def _code(source: str, i: int, nested: bool = False) -> tuple[list[str], int]:
    """The literals of code from ``i`` to its end or, ``nested`` (in a ``${``), to the ``}`` closing it."""
    found, n, depth = [], len(source), 1 if nested else 0
    while i < n:
        if source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif source.startswith("/*", i):
            i = source.index("*/", i) + 2
        elif source[i] in "\"'`":
            text, i = _literal(source, i)
            found += text
        else:
            depth += {"{": 1, "}": -1}.get(source[i], 0)
            i += 1
            if depth == 0 and nested:
                return found, i
    return found, i


def _literal(source: str, start: int) -> tuple[list[str], int]:
    quote, found, buf, j = source[start], [], [], start + 1
    while source[j] != quote:
        if source[j] == "\\":
            buf.append(source[j:j + 2])
            j += 2
        elif quote == "`" and source.startswith("${", j):
            inner, j = _code(source, j + 2, nested=True)
            found += ["".join(buf), *inner]
            buf = []
        else:
            buf.append(source[j])
            j += 1
    return [*found, "".join(buf)], j + 1


def english_msgids() -> set[str]:
    """Every msgid of every area's template: the English a learner reads somewhere."""
    found = set()
    for domain, _ in DOMAINS:
        for m in read(template_path(domain)):
            found.update(m.id if isinstance(m.id, tuple) else (m.id,))
    return {m.strip() for m in found if m and re.search(r"[A-Za-z]", m)}


def is_english(literal: str, msgids: set[str]) -> bool:
    """Words a learner would read: two prose words in a row ("Fit the graph"), one capitalised
    word ("Pause"), or the very English of a catalog's msgid ("node")."""
    if literal in NOT_LANGUAGE:
        return False
    tokens = literal.split()
    prose = [bool(PROSE_WORD.match(t)) for t in tokens]
    two = any(a and b for a, b in zip(prose, prose[1:], strict=False))
    capital = len(tokens) == 1 and prose[0] and tokens[0][0].isupper() and tokens[0][1:].islower()
    return two or capital or literal.strip() in msgids


def test_the_detector_finds_english_and_passes_identifiers_css_and_keys():
    msgids = english_msgids()
    for english in ("Fit the whole graph", "Pause", "node", "Stop comparing", "draws these iterations"):
        assert is_english(english, msgids), english
    for other in ("gv-btn gv-step", "ArrowLeft", "Enter", "aria-label", "row_node", "px ",
                  "font:600 1rem sans-serif;text-decoration:none}", "parameter", "#0060A8"):
        assert not is_english(other, msgids), other
    assert js_literals('a = "x" + `y ${z("w")} v`; // "not" \n /* "nor" */ b = \'u\'') == [
        "x", "y ", "w", " v", "u"]


def test_the_javascript_holds_no_english_a_learner_reads():
    msgids = english_msgids()
    left = [f"{path.relative_to(ROOT)}: {literal!r}" for path in js_modules()
            for literal in js_literals(unasked(path.read_text(encoding="utf-8")))
            if is_english(literal, msgids)]
    assert len(js_modules()) > 20
    assert not left, "English in the JavaScript (say it in stockdemo/render/words.py):\n" + "\n".join(left)


def asked_keys() -> set[str]:
    return {key for path in js_modules() for pattern in ASKED
            for key in pattern.findall(path.read_text(encoding="utf-8"))}


def test_every_key_the_javascript_asks_for_is_in_the_table_and_every_key_there_is_asked_for():
    table = set(words.VIEW) | set(words.VIEW_COUNTED) | set(words.EDITOR)
    asked = asked_keys()
    assert len(asked) > 60
    assert asked - table == set(), "asked for, not in stockdemo/render/words.py"
    assert table - asked == set(), "in stockdemo/render/words.py, asked for nowhere"


def test_the_editors_phrases_are_ones_codemirror_says_in_the_built_bundle():
    bundle = (ROOT / "static" / "code_editor.js").read_text(encoding="utf-8")
    for phrase in words.EDITOR_PHRASES:
        assert f'phrase("{phrase}")' in bundle


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_count_is_sent_under_every_plural_category_the_language_has(lang):
    with speaking(lang):
        sent = json.loads(words.view_words_json())
    categories = set(Locale.parse(lang).plural_form.tags) | {"other"}
    said = catalog(lang)
    for key, (one, many) in words.VIEW_COUNTED.items():
        forms = sent["counted"][key]
        assert set(forms) == categories, key
        for n, category in ((1, Locale.parse(lang).plural_form(1)), (7, "other")):
            assert forms[category] == said.ngettext(one, many, n)
    assert sent["lang"] == TAGS[lang]


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_every_word_of_the_view_and_the_editor_is_translated_keeping_its_placeholders(lang):
    """Spanish may keep a word (tensor, id); Chinese says in Chinese what the English says in words."""
    said = catalog(lang)
    single = (*words.VIEW.values(), *words.EDITOR.values(), *words.LESSON_EDITOR.values(),
              *words.EDITOR_PHRASES)
    pairs = [(m, said.gettext(m)) for m in single]
    pairs += [(many, said.ngettext(one, many, n)) for one, many in words.VIEW_COUNTED.values()
              for n in (1, 7)]
    for msgid, text in pairs:
        assert sorted(re.findall(r"\{\w+\}", text)) == sorted(re.findall(r"\{\w+\}", msgid)), (msgid, text)
        if lang == "zh_CN" and ENGLISH_WORD.search(re.sub(r"\{\w+\}", "", msgid)):
            assert re.search(r"[\u4e00-\u9fff]", text), (msgid, text)


@pytest.fixture(scope="module")
def picture():
    return layout(run(RunConfig()).graph, "auto")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_payload_carries_the_words_of_the_language_spoken_when_it_was_made(picture, lang):
    with speaking(lang):
        payload = view_payload(picture)
    assert payload["words"]["lang"] == TAGS[lang]
    assert payload["words"]["text"]["fit"] == catalog(lang).gettext(words.VIEW["fit"])
    with speaking("es"):
        other = view_payload(picture)
    assert (other["words"]["text"]["fit"] == payload["words"]["text"]["fit"]) == (lang == "es")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_buttons_name_holds_the_words_it_shows_in_every_language(lang):
    """WCAG 2.5.3 (axe's label-content-name-mismatch): a button whose name is longer than its text
    ("Fit" named "Fit the whole graph (key 0)") says its text inside its name: one speaking to a
    screen reader by what it sees must be understood. Symbols (● ▶ ◀) are not words."""
    pairs = [pair for path in js_modules() for pair in BUTTON.findall(path.read_text(encoding="utf-8"))]
    assert len(pairs) >= 4
    said = catalog(lang)
    for text, label in pairs:
        shown = said.gettext(words.VIEW[text]).strip("●▶◀ ")
        assert shown.lower() in said.gettext(words.VIEW[label]).lower(), (lang, text, label)


BUTTON = re.compile(r"button\(\"\w+\",\s*\{\s*text:\s*\"(\w+)\",\s*label:\s*\"(\w+)\"")
