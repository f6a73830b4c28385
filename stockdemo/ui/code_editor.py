"""The code editor: CodeMirror 6 with Python (or TOML, for a lesson), a Streamlit component
(frontend/code_editor).

The browser holds the text while the learner types; the server hears it only when the
learner runs it (Run, or Ctrl/Cmd+Enter): the trigger ``run`` carries ``{"code", "n"}``.
The server sends (``data``, JSON):

- ``doc``, ``doc_key``: the text to show, replaced in the browser only when ``doc_key``
  changes (a ready-made edit, a link, the teacher's code), never while the learner types;
- ``base``: a text to show ``doc`` as a diff against (the seed, for a ready-made edit), or
  None; read with ``doc``. Once the learner changes the text, the browser shows it against
  their last run's text instead, or no diff when more than a few of its lines are gone;
- ``error``: the last run's error, ``{"line", "message"}`` (its line is marked), or None;
- ``status``: a few words on the last run; ``ran``: the number of the run answered;
- ``locked``: why the code cannot be edited or run (a student following the teacher), or None;
- ``present``: presenter mode; ``height``: px, or None to take the height the window leaves;
- ``focus_line``: the line to scroll to when a new text arrives;
- ``printed``: what the last run printed, shown under the code;
- ``lesson``: what the ready-made edit on screen teaches, one line over the code ("" for none);
- ``language``: "python" (a learner's code) or "toml" (a lesson file);
- ``words``: the editor's own words in the reader's language (``stockdemo.render.words``): a
  lesson file's editor says Preview where a learner's code says Run;
- ``draft``: a name for the text typed and not yet run, or None. While it is named the
  browser keeps that text in the tab (sessionStorage); a new ``doc`` equal to the text it
  was typed on, under the same name (a reload, a new session after a dropped connection),
  opens on the typing instead;
- ``direct``: the code's socket (``stockdemo.ui.code_route``), or None. Given, a Run goes
  there first, its graph's payload is handed to the graph view (the window event
  ``stockdemo:served``), and the trigger ``run`` follows a frame later; a run that made no
  graph, or a socket that fails, sends the trigger at once.

The failing line carries the class ``sd-error-line`` (the message under it, ``sd-error-note``),
the line of a hovered graph node ``sd-hover-line``. Test hook: ``el.ceText()`` on the
editor's root (``.ce-root``) is the text it holds now.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from stockdemo.render.words import editor_words
from stockdemo.ui.assets import component_js

BUNDLE = Path(__file__).resolve().parents[2] / "static" / "code_editor.js"
CSS = Path(__file__).with_name("code_editor") / "code_editor.css"


def _loader() -> str:
    version = hashlib.blake2b(BUNDLE.read_bytes(), digest_size=6).hexdigest()
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    path = "/" + (f"{base}/" if base else "") + f"app/static/{BUNDLE.name}?v={version}"
    return component_js("loader", bundle=path, watched=False)


_COMPONENT = st.components.v2.component(
    "stockdemo_code_editor", html='<div class="ce-host"></div>', js=_loader(),
    css=CSS.read_text(encoding="utf-8"))


def _take_run(key: str, on_run: Callable[[str, int], None]) -> None:
    """The learner pressed Run: hand the code to ``on_run`` before the page draws anything."""
    run = getattr(st.session_state.get(key), "run", None)
    if isinstance(run, dict) and isinstance(run.get("code"), str) and isinstance(run.get("n"), int) \
            and not isinstance(run["n"], bool):
        on_run(run["code"], run["n"])


def code_editor(doc: str, doc_key: str, on_run: Callable[[str, int], None], *, key: str = "code_editor",
                base: str | None = None, error: dict[str, Any] | None = None, status: str = "",
                ran: int = 0, locked: str | None = None, present: bool = False,
                height: int | None = None, focus_line: int | None = None, printed: str = "",
                lesson: str = "", draft: str | None = None, language: str = "python",
                direct: str | None = None) -> None:
    """Draw the editor. A Run calls ``on_run(code, n)`` at the start of the rerun it causes
    (a callback: its result is drawn in that same rerun); ``ran`` is the last ``n`` answered."""
    data = {"doc": doc, "doc_key": doc_key, "base": base, "error": error, "status": status, "ran": ran,
            "locked": locked, "present": present, "height": height, "focus_line": focus_line,
            "printed": printed, "lesson": lesson, "draft": draft, "language": language,
            "words": editor_words(language), "direct": direct}
    _COMPONENT(data=json.dumps(data), key=key, height="content",
               on_run_change=lambda: _take_run(key, on_run))
