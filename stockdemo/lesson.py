"""The guided lesson: eight experiments, the class's turn at the code, and an optional tenth,
declared as data, each answered live.

A step names the page and settings that show one idea, asks the class a
question, and computes the answer from the core, never from a constant: when
a page stops telling the truth, the lesson's answer changes with it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from stockdemo import lab
from stockdemo import static_graphs as static
from stockdemo.cells import CELL_LABELS
from stockdemo.code.edits import EDITS, apply
from stockdemo.code.link import code_to_link
from stockdemo.config import CODE, PAGE_KNOBS, RunConfig, TrainConfig
from stockdemo.graph import FUSED_OP, Graph, count_text, op_name
from stockdemo.graph import STEP as STEP_ROLE
from stockdemo.graph.ids import graph_of_record
from stockdemo.i18n.numbers import significant
from stockdemo.live import inspection
from stockdemo.live.run import printed, run
from stockdemo.sandbox import run_code
from stockdemo.train import prices as data
from stockdemo.train import training as train


@dataclass(frozen=True)
class Answer:
    """What the class sees on reveal: one figure, large, and a sentence of live numbers."""

    label: str  # what the figure is, e.g. "Nodes gained, T 5 → 6"
    value: str  # e.g. "+4"
    detail: str


@dataclass(frozen=True)
class CodeSettings:
    """A Your code step's settings: the code the page opens on, and the ready-made edit
    that answers its question (in a class, the challenge the teacher asks: its id)."""

    source: str
    challenge: str

    KNOBS: ClassVar[tuple] = (CODE,)

    @property
    def code(self) -> str:
        """The page's ``?code=``: the source, compressed as a link carries it."""
        return code_to_link(self.source) or ""

    @property
    def answer_source(self) -> str:
        return apply(EDITS[self.challenge])


Settings = RunConfig | TrainConfig | lab.LengthsConfig | CodeSettings


@dataclass(frozen=True)
class Step:
    title: str
    context: str  # one sentence
    question: str
    page: str  # page file relative to the app root
    link_label: str
    # what the linked page opens with, and what the answer runs
    settings: Settings
    answer: Callable[[Settings], Answer]

    @property
    def link_knobs(self) -> tuple[str, ...]:
        """Every field of ``settings`` the linked page binds to its URL, so a link resets
        whatever an earlier experiment left set."""
        return tuple(k.name for k in PAGE_KNOBS[self.page] if k in self.settings.KNOBS)

    @property
    def query(self) -> dict[str, str]:
        """The link's query parameters: the page's controls set to this step's settings."""
        return {name: str(getattr(self.settings, name)) for name in self.link_knobs}

    def reveal(self) -> Answer:
        """Run the experiment now and answer the question from what it produced."""
        return self.answer(self.settings)


def node_count(config: RunConfig) -> int:
    return run(config).graph.counts.nodes


def blocks_per_layer(graph: Graph) -> dict[int, int]:
    """Layer -> how many time-step blocks autograd recorded in it."""
    blocks = {(n.layer, n.step) for n in graph.nodes if n.role == STEP_ROLE}
    return dict(sorted(Counter(layer for layer, _ in blocks).items()))


def last_grad_fn(config: RunConfig) -> Answer:
    result = run(config)
    grad_fn = re.search(r"grad_fn=<(\w+)>", printed(config)).group(1)
    return Answer("predictions.grad_fn", grad_fn,
                  f"The backward of `nn.Linear`'s matrix multiply and add: the last of the "
                  f"{count_text(result.graph.counts.operations, 'op')} PyTorch wrote down while "
                  "`forward` ran. `backward()` starts from it.")


def seed_output(config: RunConfig) -> Answer:
    result = run(config)
    return Answer("predictions.shape", str(tuple(result.predictions.shape)),
                  f"One prediction per sequence in the batch. This run recorded "
                  f"{result.graph.counts.summary()}.")


def one_more_step(config: RunConfig) -> Answer:
    before = run(config.replace(seq_len=config.seq_len - 1)).graph.counts
    after = run(config).graph.counts
    return Answer(f"Nodes gained, T {config.seq_len - 1} → {config.seq_len}",
                  f"{after.nodes - before.nodes:+d}",
                  f"T = {config.seq_len - 1}: {before.nodes} nodes. T = {config.seq_len}: {after.nodes} "
                  f"nodes. The loop ran once more, so autograd recorded one more block: "
                  f"{count_text(after.operations - before.operations, 'op')}.")


def stacked_blocks(config: RunConfig) -> Answer:
    per_layer = blocks_per_layer(run(config).graph)
    gain = node_count(config.replace(seq_len=config.seq_len + 1)) - node_count(config)
    layers = ", ".join(f"{count} in layer {layer}" for layer, count in per_layer.items())
    return Answer(f"Blocks, {config.num_layers} layers × T = {config.seq_len}",
                  str(sum(per_layer.values())),
                  f"{layers}: one per time step, per layer. Now one more step adds {gain} nodes, "
                  "one block in each layer.")


def fused_lstm(config: RunConfig) -> Answer:
    short = run(config.replace(seq_len=5)).graph
    long = run(config).graph
    fused = sum(op_name(n.op) == FUSED_OP for n in long.op_nodes)
    loop = config.replace(cell="lstm_loop")
    loop_short, loop_long = node_count(loop.replace(seq_len=5)), node_count(loop)
    return Answer(f"Nodes gained, T 5 → {config.seq_len}",
                  f"{long.counts.nodes - short.counts.nodes:+d}",
                  f"`nn.LSTM`: {short.counts.nodes} nodes at T = 5 and {long.counts.nodes} at "
                  f"T = {config.seq_len}, {fused} fused `MkldnnRnnLayerBackward0` per layer: the steps "
                  f"run inside one C++ kernel autograd cannot see into. The same LSTM as a "
                  f"{CELL_LABELS['lstm_loop']}: {loop_short} → {loop_long} nodes.")


def compile_lengths(config: RunConfig) -> tuple[int, int, int]:
    """T, then one longer, then T again: a new shape, then one already seen."""
    return config.seq_len, config.seq_len + 1, config.seq_len


def static_capture(config: RunConfig) -> Answer:
    lengths = compile_lengths(config)
    capture = static.compile_capture(config, lengths)
    export = static.export_dynamic_seq_len(config)
    reused = "reused" if not capture.steps[-1].new_graph else "captured again"
    exported = "exported" if export.ok else f"failed with `{export.error_name}`"
    return Answer("Static graphs torch.compile captured", str(len(capture.graphs)),
                  f"One per new shape ({capture.recompiles} recompile): back at T = {lengths[-1]} "
                  f"it {reused} its graph. `torch.export` with T marked dynamic: {exported}. "
                  "Eager PyTorch just records a fresh graph on every call.")


def subscript(number: int) -> str:
    """19 -> '₁₉', so h₁₉ reads like h₀."""
    return str(number).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def vanishing_gradient(config: RunConfig) -> Answer:
    inspected = inspection.inspect_run(config)
    first, last = inspected.grad_norms[-1, 0], inspected.grad_norms[-1, -1]
    ratio = inspected.vanishing_ratio
    trend = inspection.gradient_trend(ratio)
    value = {inspection.VANISHED: "vanished to 0", inspection.VANISHING: f"{trend.factor:,.0f}× smaller",
             inspection.EXPLODING: f"{trend.factor:,.0f}× bigger"}[trend.kind]
    last_h = f"‖∂L/∂h{subscript(config.seq_len - 1)}‖"
    return Answer("Gradient at step 0, against the last step", value,
                  f"‖∂L/∂h₀‖ = {significant(first)} at the first step, {last_h} = {significant(last)} "
                  f"at the last (first / last = {significant(ratio)}), read with `retain_grad()` "
                  "on every hidden state during the run.")


def honest_baseline(config: TrainConfig) -> Answer:
    dataset, _ = data.load_dataset(config)
    result = train.run_training(dataset, config)
    rmse = result.metrics["RMSE"]
    model, naive = rmse[train.MODEL_ROW], rmse[train.PERSISTENCE_ROW]
    wins = model < naive
    verdict = ("One split proves little: try other seeds and tickers before believing it."
               if wins else "Yesterday's close is a hard forecast to beat.")
    return Answer("Does the model beat tomorrow = today?", "Yes" if wins else "No: the baseline wins",
                  f"Test RMSE over {len(result.forecasts)} held-out days: model {model:.3f}, "
                  f"tomorrow = today {naive:.3f} (dollars). {verdict}")


def padded_weeks(config: lab.LengthsConfig) -> Answer:
    result = lab.different_lengths(config)
    short = sum(n < max(result.lengths) for n in result.lengths)
    packed = "exactly equal" if result.packed_gap == 0 else f"within {result.packed_gap:.1g}"
    sizes = ", ".join(sorted({f"{n} days: {g.counts.nodes} nodes"
                              for n, g in zip(result.lengths, result.window_graphs, strict=True)}))
    return Answer("Short weeks' predictions moved by", f"up to {result.padded_gaps.max():.3g}",
                  f"{short} of {len(result.lengths)} weeks are short, and read the zeros as flat days. "
                  f"Packed with `pack_padded_sequence`: {packed} to each week run alone ({sizes}).")


def cut_by_detach(settings: CodeSettings) -> Answer:
    """The loop written out, then with ``h.detach()`` in it: both run in the sandbox, as a
    learner's code runs; the nodes each graph holds, counted as the page counts them."""
    before, after = run_code(settings.source), run_code(settings.answer_source)
    failed = next((ran for ran in (before, after) if not ran.ok or ran.graph is None), None)
    if failed is not None:  # a host without the sandbox (no libseccomp, no Landlock): said so
        return Answer("Nodes the graph keeps, T = 5", "not run here",
                      f"The sandbox that runs learners' code could not run it on this server "
                      f"({failed.message or failed.status}): open Your code to see why.")
    kept, whole = (graph_of_record(r.graph).counts.nodes for r in (after, before))
    return Answer("Nodes the graph keeps, T = 5", f"{kept} of {whole}",
                  f"The loop records {whole} nodes; detached at each step, {kept}: only the last "
                  "step's block reaches the output, and `backward()` stops there.")


LOOP_WRITTEN_OUT = CodeSettings(apply(EDITS["loop"]), "detach")

STEPS: tuple[Step, ...] = (
    Step("What is a computation graph?",
         "Every operation the model runs is written down as a node; `backward()` walks that "
         "record in reverse.",
         "`print(predictions)` ends with `grad_fn=<…>`. Which operation is that?",
         "app.py", "Open Home and press Run it", RunConfig(), last_grad_fn),
    Step("The seed example",
         "The model reads 10 sequences of 5 days, 3 numbers a day, through one `nn.RNN` layer.",
         "What shape will the predictions have?",
         "pages/playground.py", "Open the Playground on the seed", RunConfig(),
         seed_output),
    Step("Longer sequences grow the graph",
         "PyTorch records the graph while the Python loop runs, one time step after another.",
         "T goes from 5 to 6: how many nodes will the graph gain?",
         "pages/playground.py", "Open the Playground at T = 6", RunConfig(seq_len=6),
         one_more_step),
    Step("Layers stack blocks",
         "A second layer reads the first layer's hidden states, step by step.",
         "Two layers, T = 5: how many blocks will the graph hold?",
         "pages/playground.py", "Open the Playground with 2 layers", RunConfig(num_layers=2),
         stacked_blocks),
    Step("The fused LSTM",
         "On CPU, `nn.LSTM` runs all its time steps inside one oneDNN kernel.",
         "`nn.LSTM`, T from 5 to 50: how many nodes will the graph gain?",
         "pages/playground.py", "Open the Playground: LSTM at T = 50",
         RunConfig(cell="lstm", seq_len=50), fused_lstm),
    Step("Static capture against dynamic graphs",
         "`torch.compile` traces one fixed graph and reuses it while the input's shape holds.",
         "It sees T = 5, then 6, then 5 again: how many graphs will it capture?",
         "pages/static_vs_dynamic.py", "Open Static vs dynamic, press Capture, move T",
         RunConfig(), static_capture),
    Step("Debugging inside a run",
         "Hooks read every hidden state and its gradient while the model runs.",
         "T = 20: is the first step's gradient bigger or smaller than the last's?",
         "pages/debugging.py", "Open Debugging at T = 20", RunConfig(seq_len=20),
         vanishing_gradient),
    Step("Training on real prices, and the honest baseline",
         "We train a fresh model on Apple's daily closes, 2010 to 2013, and test it on the last days.",
         "Will it beat the naive forecast *tomorrow's price = today's*?",
         "pages/train.py", "Open Train and predict, press Train", TrainConfig(),
         honest_baseline),
    Step("Your turn: cut the graph",
         "Your code has the loop written out; `h.detach()` keeps a tensor's value, not its history.",
         "Detach the hidden state in the loop: how many nodes will be left?",
         "pages/code.py", "Open Your code on the loop, detach it and press Run", LOOP_WRITTEN_OUT,
         cut_by_detach),
    Step("Optional: weeks of different lengths",
         "A holiday week has four trading days; to batch it with five-day weeks we pad it with zeros.",
         "Does the padding change the short weeks' predictions?",
         "pages/lab.py", "Open the Lab: different lengths", lab.LengthsConfig(), padded_weeks),
)
