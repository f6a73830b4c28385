"""The page frame every page opens with: page config, sidebar menu, presenter mode, its CSS.

Every page calls ``setup_page`` first, so a page works the same whether it is
reached from the sidebar, typed into a fresh tab, or run alone by AppTest.
"""

from __future__ import annotations

import os

import streamlit as st
import torch

from stockdemo import theme
from stockdemo.config import PRESENT
from stockdemo.i18n import N_, tr
from stockdemo.ui import hooks, keys
from stockdemo.ui.language import (
    html_lang,
    language_message,
    language_picker,
    language_to_url,
    session_language,
)
from stockdemo.ui.routes import MENU, page_link, page_source, presenting
from stockdemo.ui.url_sync import to_url

# A msgid: tr() it where shown.
DATA_CREDIT = N_(
    "Stock prices: Quandl WIKI Prices (public domain), as redistributed in "
    "bokeh-sampledata. Prices as supplied, without accuracy guarantee."
)

# Set deliberately for a server shared by many sessions: one torch thread per
# op gives steady run times under load (two stalled some runs for many seconds).
_THREADS = int(os.environ.get("STOCKDEMO_TORCH_THREADS", "1"))
if torch.get_num_threads() != _THREADS:
    torch.set_num_threads(_THREADS)
try:
    torch.set_num_interop_threads(_THREADS)
except RuntimeError:
    pass  # already set once in this process; it can only be set before first use


def setup_page(title: str, icon: str, intro: str, source: str, stage: bool = False,
               class_intros: tuple[str, str] | None = None) -> None:
    """This run's language, page config, sidebar menu and credits, title and the one-line intro.

    ``title``, ``intro`` and ``class_intros`` are msgids (``N_("...")`` in the page), said here
    in the session's language: it is decided here, first thing in every page run.
    ``source`` is the page file (``__file__``), shown and linked in the sidebar.
    ``stage``: the page's subject is a graph, drawn on a stage that takes the
    screen: the sidebar starts closed and the page's margins shrink.
    ``class_intros``: (the teacher's, a student's) intro in a class, for a page
    whose controls are not the same there (the Lesson's reveal is the teacher's);
    a listener of ``hooks.PAGE_INTRO`` picks one.
    """
    lang = session_language()
    title, intro = tr(title), tr(intro)
    present = presenting()
    # An emoji favicon: a Material icon here would be fetched from a font CDN,
    # which fails offline and logs a console error on every page. "auto" lets
    # Streamlit keep the sidebar closed on a phone instead of over the page.
    st.set_page_config(page_title=f"{title} · stockdemo", page_icon="📈", layout="wide",
                       initial_sidebar_state="collapsed" if present or stage else "auto")
    st.html(FRAME_CSS)
    if present:
        st.html(PRESENTER_CSS)
    if stage:
        # After the presenter's: the stage's compact figures win.
        st.html(f"<style>{STAGE_CSS}</style>")
    rel, code = page_source(source)
    language_to_url()
    with st.sidebar:
        html_lang(lang)
        st.markdown("### stockdemo")
        st.caption(tr("PyTorch's define-by-run graphs, live"))
        language_picker()
        st.toggle(tr(PRESENT.label), key=keys.PRESENT_TOGGLE, value=present, help=tr(PRESENT.help),
                  on_change=_set_presenting)
        for path, label, page_icon in MENU:
            page_link(path, tr(label), page_icon)
        st.divider()
        base = os.environ.get("STOCKDEMO_SOURCE_URL", "").rstrip("/")
        where = f"[`{rel}`]({base}/{rel})" if base else f"`{rel}`"
        st.markdown(tr("Code of this page: {file}", file=where))
        # The code only while open: a whole page's text, sent at each whole-page run otherwise.
        with st.expander(tr("Show this page's code"), key="page_code", on_change="rerun") as shown:
            if shown.open:
                st.code(code, language="python")
        st.caption(tr(DATA_CREDIT))
        st.caption(tr("A teaching demo, not financial advice."))
    st.title(f"{icon} {title}", anchor=False)
    unknown = language_message()
    if unknown:
        st.warning(unknown, icon=":material/translate:")
    if not present:
        chosen = (hooks.ask(hooks.PAGE_INTRO, tuple(tr(i) for i in class_intros))
                  if class_intros is not None else None)
        st.markdown(chosen or intro)
    # A plug-in's line under the title (class mode: the class bar), on every page.
    hooks.fire(hooks.PAGE_OPENED, rel)


def _tokens(*kinds: str) -> str:
    """Code highlighting's token classes, one notch more specific than Streamlit's own rules."""
    return ", ".join(f'[data-testid="stCode"] code .token.{kind}' for kind in kinds)


# ui.metric_row: figures side by side in the sizes of st.metric (label 0.875rem,
# value 2.25rem), spread over the row as a horizontal container spreads them; in
# the theme's text colour, light or dark. An item is never narrower than its value
# (min-width stays auto), so a row that cannot hold them wraps instead of overlapping.
METRIC_CSS = f"""
.sd-metrics {{ display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; margin: 0 0 0.25rem 0; }}
.sd-metric {{ flex: 1 1 7.5rem; }}
.sd-metric dt {{ font-size: 0.875rem; font-weight: 400; color: inherit; line-height: 1.6; }}
.sd-metric dd {{ margin: 0; font-size: 2.25rem; line-height: 1.3; color: inherit; white-space: nowrap; }}
.sd-metric dd.sd-delta {{ display: inline-block; font-size: 0.875rem; line-height: 1.4;
  margin-top: 0.2rem; padding: 0 0.45rem; border-radius: 1rem; }}
.sd-delta.sd-up {{ color: {theme.DELTA_UP}; background: {theme.DELTA_UP}1A; }}
.sd-delta.sd-down {{ color: {theme.DELTA_DOWN}; background: {theme.DELTA_DOWN}1A; }}
.sd-delta.sd-flat {{ color: {theme.CAPTION}; background: {theme.CAPTION}1A; }}
.sd-help {{ display: inline-block; width: 1.05em; height: 1.05em; margin-left: 0.3em;
  border: 1px solid {theme.CAPTION}; border-radius: 50%; font-size: 0.75em; line-height: 1em;
  text-align: center; color: {theme.CAPTION}; cursor: help; }}
.sd-help:focus-visible {{ outline: 2px solid {theme.BLUE}; outline-offset: 2px; }}
"""

# Code that does not fit wraps under its own start instead of scrolling sideways: a
# block that scrolls is a region a keyboard cannot reach (axe-core's
# scrollable-region-focusable). Copying still copies the lines as written.
CODE_CSS = """
[data-testid="stCode"] pre, [data-testid="stCode"] pre code {
  white-space: pre-wrap !important; overflow-wrap: anywhere; }
"""

# On a phone a row's menu takes the whole row: two side by side cut their choice short
# ("rendimiento del d", seen in Spanish at 390 px).
PHONE_CSS = """
@media (max-width: 640px) {
  [data-testid="stHorizontalBlock"] > [data-testid="stElementContainer"]:has([data-testid="stSelectbox"]) {
    flex: 1 1 100%; }
}
"""

# Keyboard users must see where they are. Streamlit shows a chart's toolbar
# (fullscreen, download) only on hover, not when one of its buttons has the
# focus, and marks a focused menu link only with the hover grey, which the
# current page's link already has. Text colours: see theme.CAPTION.
FRAME_CSS = f"""<style>
[data-testid="stElementToolbar"]:focus-within {{ opacity: 1; }}
[data-testid="stPageLink-NavLink"]:focus-visible {{ outline: 2px solid {theme.BLUE}; outline-offset: 2px; }}
[data-testid="stCaptionContainer"] {{ color: {theme.CAPTION}; opacity: 1; }}
[data-testid="stCaptionContainer"] code {{ color: {theme.CODE_TEXT}; }}
{_tokens("keyword", "function", "class-name", "builtin")} {{ color: {theme.CODE_KEYWORD}; }}
{_tokens("boolean", "number", "string", "constant")} {{ color: {theme.CODE_LITERAL}; }}
{_tokens("comment", "operator", "punctuation")} {{ color: {theme.CODE_COMMENT}; }}
{_tokens("deleted.line", "deleted.prefix")} {{ color: {theme.DELTA_DOWN}; }}
{_tokens("inserted.line", "inserted.prefix")} {{ color: {theme.DELTA_UP}; }}
{_tokens("unchanged.line")} {{ color: {theme.CODE_COMMENT}; }}
{METRIC_CSS}
{CODE_CSS}
{PHONE_CSS}
</style>"""

PRESENTER_CSS = f"""<style>
html {{ font-size: {theme.PRESENTER_ROOT_PX}px; }}
[data-testid="stMainBlockContainer"] {{ max-width: 100%; padding: 3.4rem 2rem 2rem 2rem; }}
[data-testid="stMetricValue"], .sd-metric dd {{ font-size: 2.4rem; }}
[data-testid="stMetricLabel"] p, [data-testid="stProgress"] p, .sd-metric dt {{ font-size: 1rem; }}
</style>"""


# A stage page: the graph view takes the height the viewport leaves (the component
# measures it), so everything above it is kept short. Streamlit's wide layout pads
# the page 6rem at the top and 5rem at the sides; the header is 3.75rem tall.
# Figures (ui.metric_row) sit on one line, label before value, as the run's own do in the
# graph view (frontend/graph_view/src/style.css).
STAGE_CSS = """
[data-testid="stMainBlockContainer"] { padding: 3.75rem 1.5rem 2rem 1.5rem; }
[data-testid="stMainBlockContainer"] h1 { padding: 0 0 0.25rem 0; font-size: 2.1rem; }
.sd-metrics { gap: 0.1rem 1.4rem; margin: 0; }
.sd-metric { flex: 0 1 auto; display: flex; align-items: baseline; gap: 0.45rem; }
.sd-metric dt { font-size: 0.85rem; }
.sd-metric dd, [data-testid="stMetricValue"] { font-size: 1.3rem; line-height: 1.25; }
.sd-metric dd.sd-delta { margin-top: 0; }
@media (max-width: 640px) {
  [data-testid="stMainBlockContainer"] { padding: 3.5rem 0.75rem 2rem 0.75rem; }
  [data-testid="stMainBlockContainer"] h1 { font-size: 1.6rem; }
}
"""


def _set_presenting() -> None:
    on = bool(st.session_state[keys.PRESENT_TOGGLE])
    st.session_state[keys.PRESENTING] = on
    to_url(PRESENT, "1" if on else "0")
