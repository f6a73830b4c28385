"""The interactive graph view: a Streamlit component drawing a laid-out Picture.

The server places every node (``stockdemo.layout.views``); the browser only
draws, on a canvas, pans and zooms it (d3-zoom), and replays a Trace of the run
(``stockdemo.code.view.drawing_of_record``). The CSS ships in ``graph_view/`` next to this file, the
JavaScript in ``static/graph_view.js``; both are built from ``frontend/graph_view``
(``npm ci && npm run build``).

The payload (the contract with the browser) is built by ``stockdemo.render.payload``.

Test hooks on the view's root (``[data-testid='graph-view']``): ``el.gvScreenBox(id, pane)``,
the box node ``id`` is drawn in on the last frame, in client pixels (``pane``: "a" or "b" in
compare mode), or null; ``el.gvNew()``, the boxes ringed as new since the previous run,
``[{id, op}]``; ``el.gvFolds()``, the ids of the rolled boxes a click unrolls;
``el.gvCentres()``, every node's centre on the last frame, in canvas pixels. The root's
``data-nodes`` and ``data-folds`` count the boxes and the rolled ones drawn; ``data-phase``
says which part of a new run's transition the last frame drew ("glide", then "camera",
"" once over); ``data-label-px`` the ops' text height in px (0: on hover only).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from stockdemo.code.view import drawing_of_record
from stockdemo.config import ChoiceKnob, IntKnob, RunConfig
from stockdemo.i18n import N_, language, speaking, tr
from stockdemo.layout.picture import Picture
from stockdemo.render.handout import view_file_name, view_handout
from stockdemo.render.node_table import node_table, node_table_alt
from stockdemo.render.payload import HEIGHT, Comparison, view_json
from stockdemo.replay.trace import TRAINING_ROOT
from stockdemo.train.step import first_step_record
from stockdemo.ui import keys
from stockdemo.ui.assets import component_js
from stockdemo.ui.caches import cached_picture, cached_static_payload, cached_trace
from stockdemo.ui.compare import take_pin
from stockdemo.ui.routes import inspector_link
from stockdemo.ui.stage import REPLAY_HELP, STAGE_KNOBS, take_stage_knobs
from stockdemo.ui.stage_route import catch_up
from stockdemo.ui.url_sync import selected_from_url, to_url

if TYPE_CHECKING:
    from stockdemo.replay.trace import Trace
    from stockdemo.train.prices import Dataset
    from stockdemo.train.training import TrainResult

ASSETS = Path(__file__).with_name("graph_view")
# The drawing code is a file Streamlit serves (server.enableStaticServing, from static/
# next to app.py): the browser fetches it once, not with every rerun and every graph.
BUNDLE = Path(__file__).resolve().parents[2] / "static" / "graph_view.js"


def _loader() -> str:
    """The component's module: imports the bundle, named by its content so a rebuild is never stale."""
    version = hashlib.blake2b(BUNDLE.read_bytes(), digest_size=6).hexdigest()
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    path = "/" + (f"{base}/" if base else "") + f"app/static/{BUNDLE.name}?v={version}"
    return component_js("loader", bundle=path)


# The CSS is inline: components v2 serves files only from installed packages, and
# the app runs from its checkout. Each has a line break, so Streamlit reads it as code.
_COMPONENT = st.components.v2.component(
    "stockdemo_graph_view",
    html='<div class="gv-host"></div>',
    js=_loader(),
    css=(ASSETS / "graph_view.css").read_text(encoding="utf-8"),
)

# The "Replay this run" toggle in the link, as the graph view's own toolbar draws it.
REPLAY = ChoiceKnob(keys.REPLAY, N_("Replay this run"), "false", ("false", "true"), REPLAY_HELP)


def replay_control(make_trace: Callable[[], Trace], *, key: str = keys.REPLAY,
                   in_url: bool = True, in_view: bool = False) -> Trace | None:
    """The "Replay this run" toggle; on, -> ``make_trace()`` for the view, else None.

    ``in_url``: the toggle is in the URL under ``key``, so a link can start with it.
    ``in_view``: the graph view draws the toggle in its own toolbar (a stage, where
    every line above the graph is height the graph loses); its state comes back
    through the view (``take_replay``) and the URL is written here.
    """
    if not in_view:
        on = st.toggle(tr(REPLAY.label), key=key, bind="query-params" if in_url else None,
                       help=tr(REPLAY_HELP))
    else:
        if key not in st.session_state:
            st.session_state[key] = in_url and st.query_params.get(key, "").lower() in ("true", "1")
        on = bool(st.session_state[key])
        if in_url:
            to_url(REPLAY.variant(key, REPLAY.choices), "true" if on else "false")
    if not on:
        return None
    with st.spinner(tr("Replaying the run with hooks on every node…")):
        return make_trace()


def take_replay(view_key: str, key: str = keys.REPLAY) -> None:
    """The view's own "Replay this run" button was pressed: its state becomes the session's."""
    st.session_state[key] = bool(getattr(st.session_state.get(view_key), "replay", False))


def training_trace(dataset: Dataset, result: TrainResult) -> Trace:
    """The first training step of ``result``, replayed (its graph has ``result.step_graph``'s ids);
    kept in this session while it stands."""
    kept = st.session_state.get(keys.TRAINING_TRACE)
    if kept is None or kept[0] is not result:
        kept = (result, drawing_of_record(first_step_record(dataset, result.config), root=TRAINING_ROOT)[1])
        st.session_state[keys.TRAINING_TRACE] = kept
    return kept[1]


def _sync_selection(key: str, url_key: str | None) -> None:
    """A click in the browser -> the URL's ``url_key`` (the single source of truth), if any."""
    if url_key is None:
        return
    chosen = getattr(st.session_state.get(key), "selected", None)
    if chosen:
        st.query_params[url_key] = chosen
    else:
        st.query_params.pop(url_key, None)


def graph_view(picture: Picture, trace: Trace | None = None, *, new_ids: Iterable[str] = (),
               settings: dict[str, str] | None = None, key: str = "graph_view",
               url_key: str | None = "node", height: int | None = None,
               stage: dict[str, Any] | None = None, compare: Comparison | None = None,
               on_unroll: Callable[[], None] | None = None,
               knobs: tuple[IntKnob | ChoiceKnob, ...] = STAGE_KNOBS) -> str | None:
    """Draw ``picture`` as the interactive view; -> the selected graph node id, or None.

    ``trace``: a ``stockdemo.replay.trace.Trace`` of the same run turns the replay on.
    ``new_ids``: graph node ids new since the previous run, marked on the graph.
    ``settings``: the run's URL settings; given, the selected node links to the
    Debugging page's inspector for the same run.
    ``url_key``: the URL parameter naming the selected node (None: a second view
    on a page keeps its selection to itself).
    ``height``: the graph's height in px; None (a page's main graph): it fills the
    height the window leaves under its top, or a screen's height when it starts low.
    ``stage``: the live controls drawn above the graph (``stage.stage_spec``), the values of
    ``knobs`` (the Playground's run knobs unless the page draws others).
    A stage's table comes from the page (``graph_table``), in the part that follows the
    stage once the learner stops: an element of its own redrawn on every value a drag
    crosses made each step slower.
    ``compare``: run A, drawn beside this one (``ui.comparison``).
    ``on_unroll``: called when the learner clicks a rolled box (a code graph's fold); the
    view's state ``unroll`` then lists the folds to draw unrolled (None: a click selects).
    """
    if url_key is None:
        raw = [chosen] if (chosen := getattr(st.session_state.get(key), "selected", None)) else []
    else:
        raw = st.query_params.get_all(url_key)
    selected, message = selected_from_url(picture, raw)
    if message:
        st.warning(message, icon=":material/link_off:")
    callbacks = {}
    if stage is not None:
        callbacks = {"on_knobs_change": lambda: take_stage_knobs(key, knobs),
                     "on_replay_change": lambda: take_replay(key),
                     "on_pin_change": lambda: (catch_up(), take_pin(key))}  # pins what is on screen
    if on_unroll is not None:
        callbacks["on_unroll_change"] = on_unroll
    data = view_json(picture, trace, new_ids, selected, HEIGHT if height is None else height, stage,
                     compare, fill=height is None, statics=cached_static_payload)
    _COMPONENT(data=data, key=key,
               height="content", on_selected_change=lambda: _sync_selection(key, url_key), **callbacks)
    if selected is not None and settings is not None:
        st.markdown(tr("Selected node {node}: [inspect what autograd saved for it on the Debugging "
                       "page]({link})", node=picture.describe(selected, markdown=True),
                       link=inspector_link(selected, settings)))
    if stage is None:
        graph_table(picture, trace, settings, key)
    return selected


def graph_table(picture: Picture, trace: Trace | None, settings: dict[str, str] | None,
                key: str = "graph_view") -> None:
    """The graph view's text alternative: its nodes as a sortable table, and the graph as one file."""
    with st.expander(tr("The graph as a table (sortable, for screen readers and copying)"),
                     key=f"{key}_table", on_change="rerun") as table:
        if table.open:
            # The columns named in the reader's language here; the handout's and a test's keep the msgids.
            st.dataframe(node_table(picture, trace).rename(columns=tr), hide_index=True, width="stretch",
                         alt=node_table_alt(picture))
            # Built on the click, in its own thread (a callable), not on every rerun: in the
            # language of the session that drew the button, which that thread does not speak.
            config = None if settings is None else RunConfig.from_params(settings)[0]
            lang = language()
            st.download_button(tr("Download this graph as one HTML file (opens from disk, offline)"),
                               data=lambda: _said(lang, handout_of, picture, trace, config),
                               file_name=view_file_name(config, key), mime="text/html",
                               key=f"{key}_handout", on_click="ignore")


def handout_of(picture: Picture, trace: Trace | None, config: RunConfig | None) -> str:
    """The view as one HTML file; a run's view gets its replay, replayed now if it has none."""
    if trace is None and config is not None:
        trace = cached_trace(config)
    return view_handout(picture, trace, config)


def _said(lang: str, make: Callable[..., str], *args: Any) -> str:
    """``make(*args)`` in ``lang``: for a download made in a thread of its own."""
    with speaking(lang):
        return make(*args)


def stage_table(config: RunConfig, view: str, key: str = "graph") -> None:
    """``graph_table`` of the run on the stage keyed ``key``, with its replay while that is on."""
    trace = cached_trace(config) if st.session_state.get(keys.REPLAY) else None
    graph_table(cached_picture(config, view), trace, config.to_params(), key)
