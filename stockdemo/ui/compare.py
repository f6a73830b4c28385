"""Compare mode: a run pinned as A beside the live run B, and what the stage drew last.

Run A's settings live in the session (``keys.PINNED``) and in the link (``compare=``),
so a link reopens the same comparison; the graph view's "Pin as A" button pins the run
the stage drew last (``drawn_on_stage``).
"""

from __future__ import annotations

import streamlit as st

from stockdemo.config import CELL, COMPARE, RUN_KNOBS, RunConfig, compare_text, parse_compare
from stockdemo.graph.diff import graph_diff
from stockdemo.i18n import language, tr, trn
from stockdemo.render.payload import Comparison
from stockdemo.ui import hooks, keys
from stockdemo.ui.caches import CONFIGS, cached_picture, cached_run
from stockdemo.ui.routes import share_link
from stockdemo.ui.stage import STAGE_KNOBS
from stockdemo.ui.url_sync import to_url


def compare_config() -> RunConfig | None:
    """Run A, pinned beside the live run (None: no comparison), the link's value checked.

    The URL's ``compare`` is written here, so a link reopens the same comparison; one
    this module did not write (a link followed later in the session) is taken, checked.
    """
    written = st.session_state.get(keys.PINNED_WRITTEN, "")  # "": nothing written yet
    in_link = st.query_params.get(COMPARE.name)
    if keys.PINNED not in st.session_state or in_link != written:
        config, messages = parse_compare([in_link] if in_link is not None else None)
        st.session_state[keys.PINNED] = None if config is None else compare_text(config)
        st.session_state[keys.COMPARE_MESSAGES] = messages
    for message in st.session_state.get(keys.COMPARE_MESSAGES, ()):
        st.warning(message, icon=":material/link_off:")
    text = st.session_state[keys.PINNED]
    st.session_state[keys.PINNED_WRITTEN] = to_url(COMPARE, text or COMPARE.default)
    return None if text is None else parse_compare(text)[0]


def drawn_on_stage(config: RunConfig, view: str) -> None:
    """Last in the stage's run: it has drawn these settings, all of them.

    What "Pin as A" pins and the panels show; listeners hear it (``hooks.STAGE_DRAWN``).
    Said at the end: a run stopped half-way by another rerun request has not drawn them.
    """
    st.session_state[keys.STAGE_DRAWN] = (config, view)
    hooks.fire(hooks.STAGE_DRAWN, config, view)


def stage_config() -> tuple[RunConfig, str]:
    """(config, graph view) the stage drew last: what the panels under it show."""
    return st.session_state[keys.STAGE_DRAWN]


def take_pin(key: str) -> None:
    """The view's "Pin as A" / "Stop comparing" was pressed: pin the run on screen, or unpin."""
    action = getattr(st.session_state.get(key), "pin", None)
    if action == "pin" and keys.STAGE_DRAWN in st.session_state:
        st.session_state[keys.PINNED] = compare_text(st.session_state[keys.STAGE_DRAWN][0])
    elif action == "unpin":
        st.session_state[keys.PINNED] = None
    st.session_state.pop(keys.COMPARE_MESSAGES, None)


def set_comparison(a_params: dict[str, str], b_params: dict[str, str]) -> None:
    """A comparison preset: run A's settings pinned, the stage moved to run B's (the rest default)."""
    a, _ = RunConfig.from_params(a_params)
    b, _ = RunConfig.from_params(b_params)
    st.session_state[keys.PINNED] = compare_text(a)
    st.session_state.pop(keys.COMPARE_MESSAGES, None)
    for knob in RUN_KNOBS:
        st.session_state[knob.name] = getattr(b, knob.name)


def run_label(config: RunConfig) -> str:
    """A run in a few words, in the language spoken now: 'T 5 · hidden 10 · 1 layer · nn.RNN'
    (+ what else differs)."""
    parts = [f"T {config.seq_len}", tr("hidden {n}", n=config.hidden_size),
             trn("{n} layer", "{n} layers", config.num_layers), CELL.show(config.cell)]
    for knob in RUN_KNOBS:
        if knob not in STAGE_KNOBS and getattr(config, knob.name) != knob.default:
            parts.append(tr("{setting} {value}", setting=tr(knob.label).lower(),
                            value=str(getattr(config, knob.name))))
    return " · ".join(parts)


def stage_link(config: RunConfig, view: str) -> str:
    """The link to the Playground's run on screen: its settings, its graph view, run A if pinned."""
    params = dict(config.to_params())
    if view != "auto":
        params["view"] = view
    if st.session_state.get(keys.PINNED) is not None:
        params[COMPARE.name] = st.session_state[keys.PINNED]
    return share_link("pages/playground.py", params)


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=CONFIGS)
def cached_comparison(a: RunConfig, b: RunConfig, view: str, lang: str) -> Comparison:
    """Run A beside run B, nodes matched by id (graph_diff); shared by all sessions reading ``lang``
    (the runs' labels are in it)."""
    return Comparison(cached_picture(a, view), graph_diff(cached_run(a).graph, cached_run(b).graph),
                      run_label(a), run_label(b))


def comparison(config: RunConfig, view: str) -> Comparison | None:
    """The stage's compare mode: run A (pinned, in the link) beside ``config``, or None."""
    a = compare_config()
    return None if a is None else cached_comparison(a, config, view, language())
