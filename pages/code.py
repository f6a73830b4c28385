"""Your code: the seed's model in an editor; run it and watch the graph of your own run."""

import streamlit as st

from stockdemo import ui
from stockdemo.i18n import N_, tr
from stockdemo.ui import code_run

ui.setup_page(
    N_("Your code"), ":material/code:",
    N_("Pick **skip connection** above the editor, or type your own change into `forward`, and "
       "press **Ctrl+Enter**: the graph beside it is the one *your* run recorded."),
    __file__, stage=True,
    class_intros=(
        N_("Pick an edit or type your own and press **Ctrl+Enter**: the class sees your code and its "
           "graph. Pose a challenge below and every student tries it in their own editor."),
        N_("The teacher's code and graph; when the teacher asks a challenge, the editor is yours: "
           "change the code and press **Ctrl+Enter** to see the graph *your* run recorded."),
    ),
)
ui.url_messages("pages/code.py")
if not code_run.enabled():
    st.info(code_run.off_message(), icon=":material/block:")
    st.stop()


def workspace() -> None:
    """The ready-made edits, the editor and the graph of its run."""
    source = code_run.code_source()
    code_run.edits_picker()
    editor, result = st.columns([5, 6], gap="medium")
    run = code_run.run_now(source)
    with result:  # the graph first: its payload leaves before the editor's, and is drawn sooner
        direct = code_run.result(source, run)
    with editor:
        code_run.editor(run, direct)


# A Run reruns these alone: not the frame's sidebar and menu, sent again and drawn again.
if code_run.runs_alone():
    ui.fragment(workspace, key="code_workspace")()
else:
    workspace()

st.caption(tr("Your code runs in a sandbox, never in the server: at most {limits}. Files only in its own "
              "folder, gone when the run ends; no network, no new processes.",
              limits=code_run.limits_words()))
