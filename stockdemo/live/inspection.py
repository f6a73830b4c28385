"""Look inside one run: hidden states, per-step gradients, prints, and saved tensors.

Everything here runs the real model. Every hidden state is kept as it is made
(stockdemo/live/hidden_states.py), for the built-in modules too.

The gradient shown per step is ``‖∂L/∂h_t‖`` for the loss
``L = predictions.sum()``, the norm taken over the whole batch and every
hidden unit: how strongly the prediction still depends on step ``t``.
"""

from __future__ import annotations

import contextlib
import io
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stockdemo.config import PRINT_STEP, RunConfig
from stockdemo.graph import Graph, said_label
from stockdemo.graph.capture import capture_graph
from stockdemo.graph.recorder import walk_grad_fns
from stockdemo.i18n import Message, later, later_n, tr
from stockdemo.i18n import number as written
from stockdemo.i18n.numbers import significant
from stockdemo.live.hidden_states import StepHook, hidden_states
from stockdemo.live.run import build
from stockdemo.model import LoopRNN, StockPredictor

LOSS = "predictions.sum()"

# What the Debugging page shows next to each view: the few lines that read it from a run.
HOOK_CODE = """states = []
def keep(module, args, h):
    states.append(h)  # (batch, hidden)

hook = cell.register_forward_hook(keep)
predictions = model(input_data)
hook.remove()
len(states)  # {T}, one per step"""
RETAIN_GRAD_CODE = f"""# in the hook, during forward:
h.retain_grad()

loss = {LOSS}
loss.backward()
norms = [h.grad.norm()
         for h in states]"""
PRINT_CODE = """def show(module, args, h):
    if step == {step}:
        print(h.norm(), h[0])

buf = io.StringIO()
with redirect_stdout(buf):
    model(input_data)
text = buf.getvalue()"""
SAVED_CODE = """fn = predictions.grad_fn
# fn.next_functions leads to any node
for name in dir(fn):
    if name.startswith('_saved_'):
        value = getattr(fn, name)
        print(name, value)"""

# redirect_stdout swaps sys.stdout for the whole process; one capture at a time
# keeps two sessions' prints out of each other's text.
_PRINT_LOCK = threading.Lock()


@dataclass(frozen=True)
class Inspection:
    """One run, looked into. Read it, never modify it: the page caches it for every session."""

    config: RunConfig
    weight_scale: float
    nonlinearity: str
    inputs: torch.Tensor  # (batch, seq_len, features)
    model: StockPredictor
    output: torch.Tensor  # (batch, 1), graph kept (never backward'd) for the node inspector
    graph: Graph
    hidden: tuple[np.ndarray, ...]  # per layer (seq_len, hidden): sequence 0 of the batch
    grad_norms: np.ndarray  # (num_layers, seq_len): ‖∂L/∂h_t‖ over batch and units
    prints: str  # captured_prints at PRINT_STEP.default, printed during the same forward

    @property
    def vanishing_ratio(self) -> float:
        """‖∂L/∂h_0‖ / ‖∂L/∂h_{T-1}‖ in the last layer: < 1 fades, > 1 explodes."""
        last = self.grad_norms[-1]
        return float(last[0] / last[-1]) if last[-1] > 0 else math.inf


VANISHED, VANISHING, EXPLODING = "vanished", "vanishing", "exploding"


@dataclass(frozen=True)
class GradientTrend:
    """How the gradient changes going back from the last step to the first."""

    kind: str  # VANISHED (exactly 0 at step 0), VANISHING or EXPLODING
    factor: float  # how many times smaller (vanishing) or bigger (exploding) it is at step 0


def gradient_trend(ratio: float) -> GradientTrend:
    """``Inspection.vanishing_ratio`` (first / last) -> the verdict: vanished, vanishing or exploding."""
    if ratio == 0:
        return GradientTrend(VANISHED, math.inf)
    if ratio < 1:
        return GradientTrend(VANISHING, 1 / ratio)
    return GradientTrend(EXPLODING, ratio)


def describe_trend(trend: GradientTrend) -> str:
    """The verdict as one sentence for the page (markdown)."""
    if trend.kind == VANISHED:
        return tr("Going back from the last step to the first, the gradient **vanishes completely**: at "
                  "step 0 it is exactly 0.")
    if trend.kind == VANISHING:
        return tr("Going back from the last step to the first, the gradient **shrinks by a factor of "
                  "{factor}**: vanishing gradients. Step 0 barely moves the weights.",
                  factor=factor_text(trend.factor))
    return tr("Going back from the last step to the first, the gradient **grows by a factor of {factor}**: "
              "exploding gradients.", factor=factor_text(trend.factor))


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def factor_text(value: float) -> str:
    """2.6e6 -> '2.6 × 10⁶' (2,6 in Spanish): readable from the back of the room."""
    if value < 1000 or value == math.inf:
        return significant(value)
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{written(float(mantissa), 1)} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def default_node(graph: Graph, config: RunConfig) -> str:
    """The node the inspector opens on: the op that makes the last layer's last hidden state."""
    # Op nodes come in creation order: the last one of the last step makes the final hidden state.
    last_step = [n.id for n in graph.op_nodes
                 if n.layer == config.num_layers - 1 and n.step == config.seq_len - 1]
    return last_step[-1] if last_step else graph.op_nodes[0].id  # fused LSTM: its layer node


def saved_rows(details: NodeDetails) -> list[dict[str, object]]:
    """A node's saved values as table rows: name, shape, min/max/mean/std or the value (the
    columns named in the reader's language; min, max, mean and std are torch's own names)."""
    saved, shape, value = tr("saved"), tr("shape"), tr("value")
    return [{saved: s.name, shape: str(s.shape) if s.shape is not None else "",
             **(s.stats or {}), value: str(s.text or "")} for s in details.saved]


@dataclass(frozen=True)
class SavedValue:
    """One ``_saved_*`` attribute of a grad_fn: a tensor summary or a plain value."""

    name: str
    shape: tuple[int, ...] | None = None
    stats: dict[str, float] | None = None  # min, max, mean, std
    text: str | Message | None = None  # a value as Python writes it, or why it could not be read


@dataclass(frozen=True)
class NodeDetails:
    id: str
    kind: str
    op: str | None
    label: str
    inputs: tuple[str, ...]  # node ids feeding this one (forward direction)
    outputs: tuple[str, ...]  # node ids it feeds
    saved: tuple[SavedValue, ...]


def prepare(config: RunConfig, weight_scale: float = 1.0,
            nonlinearity: str = "tanh") -> tuple[torch.Tensor, StockPredictor]:
    """The run's seeded input and model, with recurrent weights scaled and, for RNN cells, ReLU.

    -> input (batch, seq_len, features), a fresh model (never the cached, shared one)
    """
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"nonlinearity must be tanh or relu, got {nonlinearity!r}")
    x, model = build(config)
    rnn = model.rnn
    if nonlinearity == "relu" and config.base_cell == "rnn":
        if isinstance(rnn, LoopRNN):
            for cell in rnn.cells:
                cell.nonlinearity = "relu"
        else:
            # Built on the meta device: no draw from the global RNG, which other
            # sessions may be using between their seed and their last draw.
            relu = nn.RNN(rnn.input_size, rnn.hidden_size, rnn.num_layers, batch_first=True,
                          nonlinearity="relu", device="meta").to_empty(device="cpu")
            relu.load_state_dict(rnn.state_dict())
            model.rnn = relu
    with torch.no_grad():
        for w in _recurrent_weights(model.rnn):
            w.mul_(weight_scale)
    return x, model



def gradient_norms(model: StockPredictor, x: torch.Tensor) -> torch.Tensor:
    """‖∂L/∂h_t‖ for L = predictions.sum(), as ``retain_grad`` on each state then ``backward()`` read it.

    x: (batch, seq_len, features) -> (num_layers, seq_len)
    """
    return _states_and_norms(model, x)[1]


def _states_and_norms(model: StockPredictor, x: torch.Tensor, print_step: int | None = None,
                      ) -> tuple[list[list[torch.Tensor]], torch.Tensor, str]:
    """One pass for both: every hidden state (``hidden_states``) and ``gradient_norms``.

    ``torch.autograd.grad`` asks for the hidden states' gradients only: the same
    numbers ``retain_grad`` and ``backward()`` give, without computing every
    weight's gradient at every step.
    ``print_step``: the print hook of ``captured_prints`` runs in the same forward
    -> its text (else "").
    """
    out = io.StringIO()
    with torch.enable_grad():
        if print_step is None:
            predictions, states = hidden_states(model, x)
        else:
            with _printing_to(out):
                predictions, states = hidden_states(model, x, on_step=_print_at(print_step, x))
        flat = [h for layer in states for h in layer]
        grads = torch.autograd.grad(predictions.sum(), flat, allow_unused=True, materialize_grads=True)
    seq_len = len(states[0])
    norms = torch.stack(grads).flatten(1).norm(dim=1)  # (num_layers * seq_len,)
    return states, norms.reshape(len(states), seq_len), out.getvalue()


def _print_at(step: int, x: torch.Tensor) -> StepHook:
    """The print hook: at step ``step`` (clamped to 0..seq_len-1), each layer's state."""
    step = min(max(step, 0), x.shape[1] - 1)

    def show(layer: int, t: int, h: torch.Tensor) -> None:
        if t == step:
            with torch.no_grad():
                print(f"layer {layer}, step t={t}: h.shape={tuple(h.shape)}, h.norm()={h.norm():.4f}")
                print(f"  h[0] = {h[0].detach()}")
    return show


@contextlib.contextmanager
def _printing_to(out: io.StringIO) -> Iterator[None]:
    with _PRINT_LOCK, contextlib.redirect_stdout(out):
        yield


def captured_prints(model: StockPredictor, x: torch.Tensor, step: int) -> str:
    """What a ``print`` inside forward shows at time step ``step``, every layer, as text.

    x: (batch, seq_len, features); step is clamped to 0..seq_len-1.
    """
    out = io.StringIO()
    with _printing_to(out), torch.no_grad():
        hidden_states(model, x, on_step=_print_at(step, x))
    return out.getvalue()


def inspect_run(config: RunConfig, weight_scale: float = 1.0,
                nonlinearity: str = "tanh") -> Inspection:
    """Hidden states, per-step gradient norms and the live graph of one run."""
    x, model = prepare(config, weight_scale, nonlinearity)
    # The prints at the page's default step come from this same forward pass.
    states, norms, prints = _states_and_norms(model, x, PRINT_STEP.default)
    model.zero_grad(set_to_none=True)
    with torch.enable_grad():
        output = model(x)
    hidden = tuple(torch.stack([h[0].detach() for h in layer]).numpy() for layer in states)
    return Inspection(config, weight_scale, nonlinearity, x, model, output,
                      capture_graph(output, model, x), hidden, norms.numpy(), prints)


def grad_fns_by_id(output: torch.Tensor, graph: Graph, model: nn.Module) -> dict[str, object]:
    """Node id of ``capture_graph(output, model, ...)`` -> the live grad_fn behind it.

    capture_graph lists op nodes in autograd's creation order (``_sequence_nr``)
    of the same breadth-first walk, and parameters by name: walking again and
    sorting the same way pairs them up. The op names are checked on the way.
    """
    order, _ = walk_grad_fns(output.grad_fn)
    fns = sorted((fn for fn in order if not fn.name().endswith("AccumulateGrad")),
                 key=lambda fn: fn._sequence_nr())
    op_nodes = graph.op_nodes
    if [n.op for n in op_nodes] != [fn.name() for fn in fns]:
        raise ValueError("graph was not captured from this output")
    found: dict[str, object] = {n.id: fn for n, fn in zip(op_nodes, fns, strict=True)}
    accumulators = {id(fn.variable): fn for fn in order if fn.name().endswith("AccumulateGrad")}
    params = dict(model.named_parameters())
    for node in graph.nodes:
        if node.kind == "parameter" and node.param in params:
            found[node.id] = accumulators[id(params[node.param])]
    return found


NODE_LABEL_SEP = "  ·  "  # between a node's id and its label in the node picker


def node_label(graph: Graph, node_id: str) -> str:
    """What the node picker shows, and what Streamlit writes into the link: ``id  ·  label``, the
    label in the language spoken now (a link is read by its id, ``resolve_node``)."""
    return f"{node_id}{NODE_LABEL_SEP}{said_label(graph.by_id[node_id])}"


def resolve_node(graph: Graph, raw: str) -> tuple[str | None, str | None]:
    """A node named in a link, by id or by the picker's label -> (id, None), or (None, message)."""
    node_id = raw.split(NODE_LABEL_SEP, 1)[0].strip()
    if node_id in graph.by_id:
        return node_id, None
    shown = raw if len(raw) <= 60 else raw[:57] + "..."
    return None, tr("The link names node `{node}`, which this run's graph does not have (node ids look like "
                    "`L0.t4/Tanh0`); showing the default node instead.", node=shown)


def node_details(inspection: Inspection, node_id: str) -> NodeDetails:
    """Op, neighbours and saved tensors (shape, min/max/mean/std) of one graph node."""
    graph = inspection.graph
    node = graph.by_id.get(node_id)
    if node is None:
        raise KeyError(f"no node {node_id!r} in this run's graph")
    inputs = tuple(src for src, dst in graph.edges if dst == node_id)
    outputs = tuple(dst for src, dst in graph.edges if src == node_id)
    if node.kind == "input":
        saved = (_summarise("x", inspection.inputs),)
    elif node.kind == "output":
        saved = (_summarise("predictions", inspection.output.detach()),)
    elif node.kind == "parameter":
        saved = (_summarise(node.param or "variable",
                            dict(inspection.model.named_parameters())[node.param].detach()),)
    else:
        # Re-walked per call: one walk is cheap next to a Streamlit rerun.
        fn = grad_fns_by_id(inspection.output, graph, inspection.model)[node_id]
        saved = tuple(_saved_value(fn, name) for name in dir(fn) if name.startswith("_saved_"))
    return NodeDetails(node.id, node.kind, node.op, node.label, inputs, outputs, saved)


def _saved_value(fn, name: str) -> SavedValue:
    try:
        value = getattr(fn, name)
    except RuntimeError as err:  # e.g. freed by a backward() without retain_graph
        return SavedValue(name, text=later("not readable: {error}", error=str(err).splitlines()[0]))
    if isinstance(value, torch.Tensor):
        return _summarise(name, value)
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return SavedValue(name, text=later_n("{n} tensor, shapes {shapes}", "{n} tensors, shapes {shapes}",
                                             len(value), shapes=str([tuple(v.shape) for v in value])))
    if isinstance(value, int) and value >= 2**63:
        value -= 2**64  # autograd hands negative int64 back as unsigned
    text = repr(value)
    return SavedValue(name, text=text if len(text) <= 120 else text[:117] + "...")


def _summarise(name: str, value: torch.Tensor) -> SavedValue:
    shape = tuple(value.shape)
    if value.numel() == 0 or not value.is_floating_point():
        return SavedValue(name, shape=shape, text=f"dtype {value.dtype}")
    v = value.detach().double()
    stats = {"min": v.min().item(), "max": v.max().item(), "mean": v.mean().item(),
             "std": v.std(correction=0).item()}
    return SavedValue(name, shape=shape, stats=stats)


def _recurrent_weights(rnn: nn.Module) -> list[torch.Tensor]:
    if isinstance(rnn, LoopRNN):
        return [cell.weight_hh for cell in rnn.cells]
    return [getattr(rnn, f"weight_hh_l{layer}") for layer in range(rnn.num_layers)]

