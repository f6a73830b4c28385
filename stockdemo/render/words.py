"""The graph view's and the code editor's words: the msgids of everything their JavaScript says.

The JavaScript (``frontend/graph_view/src/words.js``) holds keys, never English: each payload
carries its words said in the reader's language (``view_words``, ``editor_words``), from the
same gettext catalogs as the pages (area ``view``). A counted phrase is sent in every plural
form the language has, each under its CLDR category ("one", "few", "many", "other"), and the
browser picks one with ``Intl.PluralRules``: the same CLDR rules Babel's catalogs follow.
``tests/test_view_words.py`` fails on an English literal left in the JavaScript, on a key it
asks for that is not here, and on one here that it never asks for.

Placeholders (``{n}``, ``{knob}``) are filled in the browser; numbers there are written for
the language with ``Intl.NumberFormat``, as Babel writes them here.
"""

from __future__ import annotations

import functools
import json

from babel import Locale

from stockdemo.i18n import N_, TAGS, Nn_, catalog, language

# The graph view's words, by the key its JavaScript asks for.
VIEW: dict[str, str] = {
    "graph_view": N_("Graph view"),
    "graph_role": N_("graph"),  # what a screen reader calls the canvas (its role's description)
    "canvas": N_("Autograd graph."),
    "help": N_("Wheel or pinch to zoom, drag to pan. Keys on the graph: + and − zoom, arrows pan, 0 fits, "
               "Shift+arrows move between nodes, Enter selects (or unrolls a rolled run), Space plays the "
               "replay."),
    "new_outline": N_("Blue outline: new since the previous run."),
    "fit": N_("Fit"),
    "fit_help": N_("Fit the whole graph (key 0)"),
    "zoom_out": N_("Zoom out (key −)"),
    "zoom_in": N_("Zoom in (key +)"),
    "fullscreen": N_("Fullscreen"),
    "fullscreen_help": N_("Fullscreen (key f)"),
    "keys_help": N_("Keys and gestures of the graph"),
    "replay_run": N_("Replay this run"),
    "replay_position": N_("Replay position"),
    "replay_speed": N_("Replay speed"),
    "per_second": N_("{n} /s"),
    "record": N_("● Record"),
    "record_help": N_("Record: replay the forward pass, nodes appearing as autograd recorded them"),
    "backward": N_("◀ Backward"),
    "backward_help": N_("Backward: replay backward() in the engine's real order, coloured by gradient norm"),
    "play": N_("▶ Play"),
    "pause": N_("Pause"),
    "play_help": N_("Play or pause (Space)"),
    "step_back": N_("Step back (key ,)"),
    "step_forward": N_("Step forward (key .)"),
    "loop_step": N_("loop step t = {step}"),
    "forward_at_step": N_("forward(): the loop at step t = {step}"),
    "forward_line_now": N_("forward(): the line running now"),
    "backward_line_now": N_("backward() of {root}: the line that made the node it runs now"),
    "grad_norm": N_("‖grad‖ {norm}"),
    "graph_freed": N_("graph freed"),
    "freed_head": N_("The graph is freed. A second backward() raises:"),
    "not_finite": N_("NaN or ∞"),
    "norm_legend": N_("gradient norm (log scale)"),
    "side": N_("Selected node, forward code and replay"),
    "selected_node": N_("Selected node"),
    "selected": N_("Selected: {node}"),
    "row_node": N_("node"),
    "row_op": N_("op"),
    "row_parameter": N_("parameter"),
    "row_shape": N_("output shape"),
    "row_step_layer": N_("step, layer"),
    "step_layer": N_("t {step}, layer {layer}"),
    "row_stands_for": N_("stands for"),
    "row_saved": N_("saved for backward"),
    "row_created_by": N_("created by"),
    "row_grad": N_("‖.grad‖"),
    "row_incoming_grad": N_("‖incoming grad‖"),
    "row_new": N_("new"),
    "new_since": N_("since the previous run"),
    "row_click": N_("click"),
    "click_unrolls": N_("draws these iterations one by one"),
    "bytes": N_("{n} B"),
    "kilobytes": N_("{n} KB"),
    "megabytes": N_("{n} MB"),
    "pin": N_("Pin as A"),
    "pin_help": N_("Pin this run as A, then change the settings: A and B drawn one above the other"),
    "stop_comparing": N_("Stop comparing"),
    "unpin_help": N_("Unpin run A: back to one graph"),
    "a_to_b": N_("From A to B: {nodes}; {edges}."),
    "skip": N_("Skip to the graph and its controls"),
    "settings": N_("This run's settings"),
    "one_less": N_("{knob}: one less"),
    "one_more": N_("{knob}: one more"),
    "knob_value": N_("{knob} {value}"),
    "load_failed": N_("The graph's drawing code did not load (is the server restarting?). It is tried "
                      "again with the next run; reload the page if it stays away."),
}

# Counted phrases: (singular, plural), ``{n}`` the count.
VIEW_COUNTED: dict[str, tuple[str, str]] = {
    "node_n": Nn_("{n} node", "{n} nodes"),
    "nodes_b_lacks": Nn_("{n} node B lacks", "{n} nodes B lacks"),
    "nodes_a_lacks": Nn_("{n} node A lacks", "{n} nodes A lacks"),
    "nodes_added": Nn_("{n} node added, {removed} removed", "{n} nodes added, {removed} removed"),
    "edges_added": Nn_("{n} edge added, {removed} removed", "{n} edges added, {removed} removed"),
    "tensors_of": Nn_("{n} tensor, {size}", "{n} tensors, {size}"),
}

# The code editor's words.
EDITOR: dict[str, str] = {
    "run": N_("▶ Run"),
    "run_help": N_("Run this code (Ctrl+Enter, or ⌘+Enter on a Mac)"),
    "hint": N_("Ctrl+Enter runs · Esc then Tab leaves the editor"),
    "printed": N_("What your code printed"),
    "code": N_("Python code: edit it, then press Ctrl+Enter to run it"),
    "running": N_("Running…"),
    "load_failed": N_("The code editor did not load (is the server restarting?). It is tried again "
                      "with the next run; reload the page if it stays away."),
}

# A lesson file's editor (the Write a lesson page) previews where a learner's code runs.
LESSON_EDITOR: dict[str, str] = {
    **EDITOR,
    "run": N_("▶ Preview"),
    "run_help": N_("Read the lesson and compute every step's answer (Ctrl+Enter)"),
    "hint": N_("Ctrl+Enter previews · Esc then Tab leaves the editor"),
    "code": N_("Lesson file (TOML): edit it, then press Ctrl+Enter to preview it"),
}

# CodeMirror's own words that the editor's bundle says, by CodeMirror's English (its phrases:
# a screen reader hears this one when the learner deletes a selection).
EDITOR_PHRASES: tuple[str, ...] = (N_("Selection deleted"),)

# Counts whose forms show every CLDR category a language has (Spanish "many" is a million).
_SAMPLES = (*range(0, 111), 1000, 1_000_000, 10**9)


def _counted(lang: str, singular: str, plural: str) -> dict[str, str]:
    """Each CLDR plural category of ``lang`` -> the catalog's form for a count in it."""
    rule, said = Locale.parse(lang).plural_form, catalog(lang)
    forms: dict[str, str] = {}
    for n in _SAMPLES:
        forms.setdefault(rule(n), said.ngettext(singular, plural, n))
    return forms


def _words(lang: str, text: dict[str, str], counted: dict[str, tuple[str, str]],
           phrases: tuple[str, ...]) -> dict:
    said = catalog(lang)
    return {"lang": TAGS[lang], "text": {k: said.gettext(m) for k, m in text.items()},
            "counted": {k: _counted(lang, *pair) for k, pair in counted.items()},
            "phrases": {m: said.gettext(m) for m in phrases}}


@functools.cache
def _view_words(lang: str) -> str:
    return json.dumps(_words(lang, VIEW, VIEW_COUNTED, ()), ensure_ascii=False, separators=(",", ":"))


@functools.cache
def _editor_words(lang: str, language: str) -> dict:
    return _words(lang, LESSON_EDITOR if language == "toml" else EDITOR, {}, EDITOR_PHRASES)


def view_words_json() -> str:
    """The graph view's words in the language spoken now, as the payload's JSON (made once a language)."""
    return _view_words(language())


def editor_words(language_edited: str = "python") -> dict:
    """The code editor's words in the language spoken now, for code in ``language_edited``
    ("python", or "toml": a lesson file). Its payload's ``words``; shared: read only."""
    return _editor_words(language(), language_edited)
