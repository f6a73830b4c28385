"""The only Streamlit code: pages use it as ``from stockdemo import ui; ui.setup_page(...)``.

- ``frame``: page set-up, sidebar menu, presenter mode, links between pages;
- ``controls``: widgets bound to the URL, the link's values checked, presets;
- ``caches``: runs, drawings and figures shared by every session;
- ``panels``: composite elements a page places with one call.
"""

from stockdemo import heap
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
    cached_prices_figure,
    cached_prices_table,
    cached_prints,
    cached_render,
    cached_run,
    cached_size_sweep,
)
from stockdemo.ui.controls import (
    capped_knob_widget,
    compare_bar,
    debug_controls,
    go_to_step,
    graph_picker,
    knob_row,
    knob_widget,
    lesson_step,
    more_settings,
    node_from_url,
    number_box,
    panel_picker,
    presets_bar,
    run_controls,
    share_link,
    static_controls,
    train_controls,
    url_messages,
)
from stockdemo.ui.frame import (
    DATA_CREDIT,
    PAGES,
    ROOT,
    page_link,
    page_source,
    page_url,
    presenting,
    setup_page,
)
from stockdemo.ui.panels import (
    Metric,
    TrainPanel,
    aside,
    change_since_previous,
    chart_after_graph,
    fx_graph,
    leave_for_training,
    metric_row,
    outcome_box,
    recompile_count,
    recompiles,
    run_downloads,
    run_figures,
    static_captures,
    table,
    train_button,
    training_pending,
    training_run,
)
from stockdemo.ui.stage import (
    compare_config,
    drawn_on_stage,
    settle_listener,
    stage_config,
    stage_link,
    stage_spec,
    stage_to_url,
    stage_values,
)

__all__ = [
    "DATA_CREDIT", "EXPORTS", "Metric", "PAGES", "ROOT", "TrainPanel", "aside", "cached_answer",
    "cached_debug_figure", "cached_early_stop_runs", "cached_experiment", "cached_export",
    "cached_figure", "cached_inspection", "cached_dataset", "cached_prices_figure", "cached_prices_table",
    "cached_prints", "cached_render", "cached_run",
    "cached_size_sweep", "capped_knob_widget", "compare_bar", "compare_config", "drawn_on_stage",
    "change_since_previous", "chart_after_graph",
    "debug_controls", "fx_graph", "go_to_step", "graph_picker", "knob_row", "knob_widget",
    "leave_for_training", "lesson_step", "metric_row", "more_settings", "settle_listener", "stage_config",
    "stage_link", "stage_spec", "stage_to_url", "stage_values",
    "node_from_url", "number_box", "outcome_box", "panel_picker", "page_link", "page_source", "page_url",
    "presenting", "presets_bar", "recompile_count", "recompiles", "run_controls", "run_downloads",
    "run_figures", "table",
    "setup_page", "share_link", "static_captures", "static_controls", "train_button", "train_controls",
    "training_pending", "training_run", "url_messages",
]

# Imported once per server process, after torch, plotly and Streamlit: the heap they built
# is frozen out of the collector's passes (stockdemo/heap.py has the figures).
heap.tune_for_serving()
