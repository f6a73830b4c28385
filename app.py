"""Home: what a computation graph is, static vs dynamic, and the seed example, run live."""

import streamlit as st

from stockdemo import ui
from stockdemo.config import RunConfig
from stockdemo.i18n import N_, number, tr
from stockdemo.live.reproduce import reproduce_code
from stockdemo.live.run import printed

ui.setup_page(
    N_("Dynamic graphs, live"), ":material/home:",
    N_("Read the seed example below, press **Run it** beside it, then open the **Playground** and "
       "watch the graph grow as you lengthen the sequence."),
    __file__,
)


# A fragment: pressing Run it reruns only the run and its output.
@ui.fragment
def run_it() -> None:
    with st.container(horizontal=True, vertical_alignment="center"):
        pressed = st.button(tr("Run it"), key="run_seed", type="primary", icon=":material/play_arrow:")
        if pressed:  # the next step, beside the button: the output below runs to the fold
            ui.page_link("pages/playground.py", tr("See that graph in the Playground"),
                         ":material/arrow_forward:")
    if not pressed:
        st.caption(tr("Runs the seed example, live, and prints what it prints."))
        return
    result = ui.cached_run(RunConfig())
    st.caption(tr("`print(predictions)` (after `torch.manual_seed({seed})`):", seed=result.config.seed))
    st.code(printed(result.config), language="text", wrap_lines=True)
    st.markdown(tr("`predictions.shape` = `{shape}`: one predicted price for each of the {batch} "
                   "sequences in the batch. `grad_fn=<AddmmBackward0>` is the last node of the graph "
                   "this run recorded.", shape=tuple(result.predictions.shape),
                   batch=number(result.config.batch_size)))


# The seed example first, Run it beside it: the page's first sentence says read, press, then
# open the Playground. (Below the code, Run it sat at the fold of a 1440x900 screen and its
# output under it.)
code, output = st.columns([5, 4], gap="large")
with code:
    st.subheader(tr("The seed example"), anchor=False)
    st.markdown(tr("A recurrent network that reads 5 days of 3 numbers and predicts one price:"))
    st.code(reproduce_code(RunConfig()).replace("torch.manual_seed(0)\n", ""), language="python",
            wrap_lines=True)
with output:
    run_it()

left, right = st.columns(2, gap="large")
with left:
    st.subheader(tr("What is a computation graph?"), anchor=False)
    st.markdown(tr(
        "Every time a model computes something, PyTorch can note down each operation it did "
        "and which results it used: a multiply here, an add there, a `tanh` after that. "
        "That record is a **graph**: operations are the nodes, the data flowing between "
        "them are the edges. Calling `backward()` walks the record in reverse to work out "
        "how each weight should change."
    ))
with right:
    st.subheader(tr("Static or dynamic?"), anchor=False)
    st.markdown(tr(
        "- **Static** (define, then run): you describe the whole graph first, a compiler "
        "optimises it, then data flows through the same fixed graph every time.\n"
        "- **Dynamic** (define by running): PyTorch writes the graph down *while your Python "
        "code runs*. Each run records a fresh graph, so a loop that runs 5 times leaves 5 "
        "copies of its body in the graph, and an `if` leaves only the branch it took.\n\n"
        "That is why you can change the sequence length, the number of layers, or the code "
        "itself between two runs, and why you can `print` or inspect anything mid-run."
    ))
