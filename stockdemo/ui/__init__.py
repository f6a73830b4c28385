"""The only Streamlit code: pages use it as ``from stockdemo import ui; ui.setup_page(...)``.

- ``frame``: page set-up, sidebar menu, presenter mode, links between pages;
- ``controls``: widgets bound to the URL, the link's values checked, presets;
- ``caches``: runs, drawings and figures shared by every session;
- ``panels``: composite elements a page places with one call.
"""

from stockdemo.ui.caches import (
    cached_figure,
    cached_inspection,
    cached_prints,
    cached_render,
    cached_run,
    cached_size_sweep,
)
from stockdemo.ui.controls import (
    capped_knob_widget,
    knob_row,
    knob_widget,
    node_from_url,
    number_box,
    presets_bar,
    run_controls,
    share_link,
    url_messages,
)
from stockdemo.ui.frame import DATA_CREDIT, PAGES, ROOT, page_link, page_url, presenting, setup_page
from stockdemo.ui.panels import chart_after_graph

__all__ = [
    "DATA_CREDIT", "PAGES", "ROOT", "cached_figure", "cached_inspection", "cached_prints",
    "cached_render", "cached_run", "cached_size_sweep", "capped_knob_widget", "chart_after_graph",
    "knob_row", "knob_widget", "node_from_url", "number_box", "page_link", "page_url", "presenting",
    "presets_bar", "run_controls", "setup_page", "share_link", "url_messages",
]
