"""Your code: the seed's model in an editor; run it and watch the graph of your own run."""

import streamlit as st

from stockdemo import ui
from stockdemo.ui import code_run
from stockdemo.ui.code_editor import code_editor
from stockdemo.ui.graph_view import graph_view, replay_control

ui.setup_page(
    "Your code", ":material/code:",
    "Pick **skip connection** above the editor, or type your own change into `forward`, and "
    "press **Ctrl+Enter**: the graph on the right is the one *your* run recorded.",
    __file__, stage=True,
)
ui.url_messages("pages/code.py")
if not code_run.enabled():
    st.info(code_run.off_message(), icon=":material/block:")
    st.stop()

source = code_run.code_source()
code_run.edits_picker()
editor, result = st.columns([5, 6], gap="medium")
run = code_run.run_now(source)
with editor:
    text, version, base, ran = code_run.editor_state()
    code_editor(text, str(version), code_run.take_run, base=base, ran=ran,
                error=code_run.error_mark(run), status=code_run.status(run),
                locked=ui.controls_locked(), present=ui.presenting(), focus_line=code_run.forward_line(text),
                printed=run.printed)
with result:
    if run.graph is None:
        ui.metric_row(code_run.run_figures(run))
        st.error(run.message, icon=":material/error:")
    else:
        # A stage without knobs: the run's figures and the replay toggle inside the view.
        picture, trace = code_run.picture(source)
        shown = replay_control(lambda: trace, in_url=False, in_view=True)
        graph_view(picture, shown, new_ids=code_run.new_since_previous(picture.graph), key="code_graph",
                   url_key=None, stage=ui.stage_spec({}, knobs=(), change=code_run.lesson(),
                                                     replay=shown is not None,
                                                     figures=code_run.run_figures(run),
                                                     present=ui.presenting(), pin=False))
st.caption(f"Your code runs in a sandbox, never in the server: at most {code_run.limits_words()}. "
           "No files, no network, no new processes.")
