"""Lab: one batch of different lengths, and the mistakes a graph recorded at run time allows."""

import streamlit as st

from stockdemo import lab, ui
from stockdemo.i18n import N_, tr
from stockdemo.ui.graph_view import graph_view

ui.setup_page(
    N_("Lab"), ":material/science:",
    N_("Pick an experiment and move its controls: each one runs for real, breaks the way it does in "
       "your own code, and shows **torch's own message**, the graph before and after, and the fix."),
    __file__,
)
ui.url_messages("pages/lab.py")


# A fragment per experiment: moving one of its controls reruns only that experiment.
# The report is shared by every session: its words are said here, in this reader's language.
@ui.fragment
def experiment(name: str) -> None:
    config_class = lab.EXPERIMENTS[name][0]
    config = config_class(**ui.knob_row(*config_class.shown_knobs(st.session_state)))
    report, pictures, table = ui.cached_experiment(name, config)
    st.markdown(str(report.headline))
    ui.metric_row(ui.Metric(str(label), str(value), help=str(help_text) or None)
                  for label, value, help_text in report.metrics)
    for what, message in report.errors:
        st.markdown(tr("{what} raises, word for word:", what=what))
        st.code(message, language=None, wrap_lines=True)
    if report.code:
        for column, (caption, code) in zip(st.columns(len(report.code)), report.code, strict=True):
            column.markdown(f"**{caption}**")
            column.code(code, language="python", wrap_lines=True)
    if report.notes:  # one element: each is sent again on every move of the experiment's sliders
        st.markdown("\n\n".join(str(note) for note in report.notes))
    for figure, alt, caption in report.figures:
        st.plotly_chart(figure, width="stretch", alt=str(alt))
        if caption:
            st.caption(str(caption))
    # One graph at a time in the interactive view, full width: zoom, hover any node for its
    # op, shapes and what autograd saved; the picker swaps them in place. (Half width through
    # Graphviz their labels could not be read; four views stacked cost the server twice the
    # CPU of a move.)
    i = ui.graph_picker([shown.label for shown in report.graphs])
    if report.graphs:
        st.markdown(f"**{report.graphs[i].caption}**")
        graph_view(pictures[i], key=f"lab_graph_view_{i}", url_key=None)
    if table is not None:
        with st.expander(tr("Every number of this run")):
            ui.table(table, words=True)


# Lazy tabs: only the open experiment runs. A link names it (?lab=NaN) in any language.
for tab, name in ui.experiment_tabs(list(lab.EXPERIMENTS)):
    with tab:
        if tab.open:
            experiment(name)
