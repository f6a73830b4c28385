"""The only Streamlit code: pages use it as ``from stockdemo import ui; ui.setup_page(...)``
(and the graph view as ``from stockdemo.ui.graph_view import graph_view``).

The package is in layers, each importing only the ones below it (docs/architecture.md;
tests/test_architecture.py checks it):

1. ``compat`` (Streamlit's private API, one door), ``keys``, ``routes``, ``hooks``, ``language``;
2. ``caches``, ``url_sync``, ``widgets``, ``metrics``, ``elements``: caches and widgets;
3. ``stage``, ``stage_route``, ``stage_watch``, ``compare``, ``graph_view``: the graph view;
4. ``controls``, ``steps``, ``downloads``, ``training``, ``captures``: panels;
5. ``frame``: the page frame;
6. ``classmode``: class mode, a plug-in listening on ``hooks``;
7. this facade, which registers class mode once.
"""

from stockdemo import heap
from stockdemo.ui import classmode, compat
from stockdemo.ui.caches import (
    EXPORTS,
    cached_answer,
    cached_dataset,
    cached_debug_figure,
    cached_early_stop_runs,
    cached_experiment,
    cached_export,
    cached_figure,
    cached_inspection,
    cached_picture,
    cached_prices_figure,
    cached_prices_table,
    cached_prints,
    cached_render,
    cached_run,
    cached_size_sweep,
    cached_trace,
)
from stockdemo.ui.captures import fx_graph, outcome_box, recompile_count, recompiles, static_captures
from stockdemo.ui.compare import compare_config, comparison, drawn_on_stage, stage_config, stage_link
from stockdemo.ui.controls import (
    compare_bar,
    debug_controls,
    more_settings,
    presets_bar,
    run_controls,
    static_controls,
    train_controls,
)
from stockdemo.ui.downloads import run_downloads
from stockdemo.ui.elements import aside, chart_after_graph, table
from stockdemo.ui.frame import DATA_CREDIT, setup_page
from stockdemo.ui.graph_view import replay_control, stage_table, training_trace
from stockdemo.ui.keys import PLAYGROUND_LIVE
from stockdemo.ui.language import fragment
from stockdemo.ui.metrics import Metric, metric_row
from stockdemo.ui.routes import PAGES, ROOT, page_link, page_source, page_url, presenting, share_link
from stockdemo.ui.stage import live_stage, stage_to_url
from stockdemo.ui.stage_route import direct_moves
from stockdemo.ui.stage_watch import settle_listener, stage_settled
from stockdemo.ui.steps import (
    go_to_step,
    lesson_challenge,
    lesson_drawn,
    lesson_picker,
    lesson_question,
    lesson_step,
    reveal_step,
    shown_lesson,
    step_revealed,
)
from stockdemo.ui.training import (
    TrainPanel,
    leave_for_training,
    train_button,
    training_pending,
    training_run,
)
from stockdemo.ui.url_sync import node_from_url, number_box, url_messages
from stockdemo.ui.widgets import (
    capped_knob_widget,
    controls_locked,
    experiment_tabs,
    graph_picker,
    knob_row,
    knob_widget,
    panel_picker,
)

__all__ = [
    "DATA_CREDIT", "EXPORTS", "Metric", "PAGES", "PLAYGROUND_LIVE", "ROOT", "TrainPanel", "aside",
    "cached_answer", "cached_dataset", "cached_debug_figure", "cached_early_stop_runs",
    "cached_experiment", "cached_export", "cached_figure", "cached_inspection", "cached_picture",
    "cached_prices_figure", "cached_prices_table", "cached_prints", "cached_render", "cached_run",
    "cached_size_sweep", "cached_trace", "capped_knob_widget", "chart_after_graph", "compare_bar",
    "compare_config", "comparison", "controls_locked", "debug_controls", "direct_moves",
    "drawn_on_stage", "experiment_tabs", "fragment", "fx_graph", "go_to_step", "graph_picker",
    "knob_row", "knob_widget", "leave_for_training", "lesson_challenge", "lesson_drawn",
    "lesson_picker", "lesson_question", "lesson_step", "live_stage", "metric_row", "more_settings",
    "node_from_url", "number_box", "outcome_box", "page_link", "page_source", "page_url",
    "panel_picker", "presenting", "presets_bar", "recompile_count", "recompiles", "replay_control",
    "reveal_step", "run_controls", "run_downloads", "settle_listener", "setup_page", "share_link",
    "shown_lesson", "stage_config", "stage_link", "stage_settled", "stage_table", "stage_to_url",
    "static_captures", "static_controls", "step_revealed", "table", "train_button",
    "train_controls", "training_pending", "training_run", "training_trace", "url_messages",
]

# The one registration point of the class-mode plug-in: its listeners on ui.hooks.
classmode.register()

# Every run's new_session message takes its theme from a copy made once, not from a scan of
# the whole config (stockdemo/ui/compat.py).
compat.cache_theme_messages()
# A session resumed after a dropped connection watches no files, as a new one (compat.py).
compat.resume_without_watchers()
# A rerun that meets a finished run's messages still on their way waits for them (compat.py).
compat.defer_reruns_behind_finished_runs()
# ...and a session that reconnected during a flush gets its messages on its new websocket.
compat.send_to_the_current_websocket()

# Imported once per server process, after torch, plotly and Streamlit: the heap they built
# is frozen out of the collector's passes (stockdemo/heap.py has the figures).
heap.tune_for_serving()
heap.tune_malloc()
