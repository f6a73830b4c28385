"""The same model captured as static graphs: ``torch.compile`` and ``torch.export``, live.

Eager autograd records a fresh graph on every run. The static tools trace the
model once into an FX graph and reuse it while its *guards* hold:

- ``CompileSession`` runs ``torch.compile`` with a backend that only records
  the FX graphs dynamo hands it (no code generation), one sequence length at a
  time, kept between a learner's moves: it counts how many graphs (recompiles)
  the lengths took, which graph each call ran, and when dynamo's recompile
  limit made it run the model eagerly. ``compile_capture`` replays a list of
  lengths through a new one.
- ``export_static`` / ``export_dynamic_seq_len`` run ``torch.export`` with
  the sequence length fixed, then marked dynamic (``torch.export.Dim``).
- ``EarlyStopRNN`` stops its loop when the hidden state grows large: a
  data-dependent ``if``. Eager mode records graphs of different lengths for
  different inputs; ``export_early_stop`` shows what export makes of it, and
  ``export_cond_stop`` tries the ``torch.cond`` rewrite export asks for.

Every outcome, success or the real exception, is whatever torch does now:
nothing here is written in advance.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import math
import re
import textwrap
import threading
import time
import types
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import fx, nn
from torch._C._dynamo.eval_frame import reset_code
from torch._dynamo import convert_frame

from stockdemo import theme
from stockdemo.config import RunConfig
from stockdemo.dot import write_statements
from stockdemo.graph import Graph, capture_graph
from stockdemo.live import build

# Dynamo's config and counters are process-wide, and every Streamlit session runs
# in this one process: one trace or export at a time. Nothing here resets dynamo as a
# whole: each CompileSession's graphs live on a code object of its own.
_DYNAMO_LOCK = threading.Lock()

MAX_DRAWN_FX_NODES = 120  # past this the FX graph is shown as code only
# Exporting the torch.cond rewrite traces two subgraphs per step (~0.3 s each here),
# so it runs at a short length, said on the page.
COND_MAX_T = 3

# The calm input is the run's input scaled down, the volatile one scaled up,
# so the early-stop model keeps going on one and breaks out early on the other.
CALM_SCALE = 0.1
VOLATILE_SCALE = 3.0


@dataclass(frozen=True)
class FxOp:
    """One node of an FX graph, as plain data."""

    name: str
    kind: str  # "input" | "parameter" | "op" | "branch" (a torch.cond subgraph) | "output"
    label: str  # e.g. "torch.rnn_tanh", "rnn.weight_ih_l0", "x"
    shape: str  # e.g. "(10, 5, 10)"; "" where the node holds no tensor
    inputs: tuple[str, ...]  # names of the nodes it reads


@dataclass(frozen=True)
class StaticGraph:
    """An FX graph captured by dynamo or export, and its printed code."""

    ops: tuple[FxOp, ...]
    code: str

    @property
    def op_count(self) -> int:
        return sum(op.kind == "op" for op in self.ops)

    @property
    def ops_by_type(self) -> dict[str, int]:
        return dict(Counter(op.label for op in self.ops if op.kind == "op").most_common())

    def input_shape(self) -> str:
        return next((op.shape for op in self.ops if op.kind == "input"), "")


@dataclass(frozen=True)
class CompileStep:
    seq_len: int
    new_graph: bool  # did this call make dynamo capture (compile) a new graph?
    graphs_so_far: int
    graph_index: int | None  # which captured graph this call ran; None: forward ran eagerly
    seconds: float = 0.0  # this call, tracing included

    @property
    def eager(self) -> bool:
        return self.graph_index is None


@dataclass(frozen=True)
class CompileCapture:
    """``torch.compile`` called at each sequence length in turn, in one dynamo session."""

    steps: tuple[CompileStep, ...]
    graphs: tuple[StaticGraph, ...]
    frames_compiled: int  # dynamo's own count (torch._dynamo.utils.counters)
    seconds: float  # all calls, tracing included
    limit: int = 8  # torch._dynamo.config.recompile_limit when the calls ran
    warning: str | None = None  # what dynamo logged when it hit that limit, word for word

    @property
    def recompiles(self) -> int:
        return max(len(self.graphs) - 1, 0)

    @property
    def seq_lens(self) -> tuple[int, ...]:
        """The distinct lengths called, in the order first called."""
        return tuple(dict.fromkeys(s.seq_len for s in self.steps))

    @property
    def eager_calls(self) -> int:
        return sum(s.eager for s in self.steps)

    @property
    def limit_reached(self) -> bool:
        return self.warning is not None or self.eager_calls > 0

    @property
    def symbolic(self) -> bool:
        """Did any graph keep a size as a symbol (dynamic shapes) instead of a number?"""
        return any(re.search(r"[a-z]", g.input_shape()) for g in self.graphs)

    @property
    def last_graph(self) -> StaticGraph | None:
        """The graph the last call ran; after an eager call, the last graph captured."""
        if not self.steps or not self.graphs:
            return None
        index = self.steps[-1].graph_index
        return self.graphs[-1 if index is None else index]


@dataclass(frozen=True)
class ExportOutcome:
    """What ``torch.export.export`` did: an exported graph, or the exception it raised."""

    ok: bool
    graph: StaticGraph | None
    error_type: str | None  # e.g. "torch._dynamo.exc.UserError"
    message: str | None  # the error text, condensed
    seconds: float
    note: str = ""  # extra facts measured after a success
    # SPECIALIZED when torch reports that a size marked dynamic was fixed by the traced code
    failure: str | None = None

    @property
    def error_name(self) -> str | None:
        return self.error_type.rsplit(".", 1)[-1] if self.error_type else None


# --- torch.compile ---------------------------------------------------------


class CompileSession:
    """One model under ``torch.compile``, called at one sequence length after another.

    Kept between calls (a learner's page runs), it holds dynamo's real state:
    a T seen before passes the guards of the graph captured for it and runs
    that graph; a new T fails every guard and is traced again, until dynamo's
    recompile limit (``torch._dynamo.config.recompile_limit``). Past it dynamo
    logs a warning and runs ``forward`` eagerly for every new T, while the T's
    it captured keep their graphs. Each call records which graph ran, if any:
    the backend hands dynamo a function that notes its graph's number.

    The model is built once, from the config (its seed and sizes; T only sets
    each call's input, the run's own input at that length).
    """

    def __init__(self, config: RunConfig) -> None:
        _, self.model = build(config)
        self.config = config
        self._record = _Record({id(p): name for name, p in self.model.named_parameters()})
        self._steps: list[CompileStep] = []
        self._frames = 0
        self._warning: str | None = None
        self._limit = recompile_limit()
        code = _own_forward(self.model)
        # Dynamo keeps its own references to a code object it compiled (its guard-failure
        # log, by code): let them go with this session, with the graphs cached on it.
        weakref.finalize(self, _forget, code)
        self._compiled = torch.compile(self.model, backend=_record_only)

    @property
    def seq_lens(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(s.seq_len for s in self._steps))

    def call(self, seq_len: int) -> CompileStep:
        """Run the compiled model once at ``seq_len`` -> what dynamo did."""
        global _recording
        x, _ = build(self.config.replace(seq_len=seq_len))
        heard = _Heard()
        graphs, ran = self._record.graphs, self._record.ran
        started = time.perf_counter()
        with _DYNAMO_LOCK, torch._dynamo.config.patch(allow_rnn=True), heard:
            frames = int(torch._dynamo.utils.counters["frames"]["ok"])
            before = len(graphs)
            ran.clear()
            _recording = self._record
            try:
                with torch.no_grad():
                    self._compiled(x)
            finally:
                _recording = None
            self._frames += int(torch._dynamo.utils.counters["frames"]["ok"]) - frames
            self._limit = recompile_limit()
        if heard.limit_warning and self._warning is None:
            self._warning = heard.limit_warning
        step = CompileStep(seq_len, len(graphs) > before, len(graphs), ran[-1] if ran else None,
                           time.perf_counter() - started)
        self._steps.append(step)
        return step

    def capture(self) -> CompileCapture:
        """Every call so far, and the graphs they captured (a snapshot)."""
        return CompileCapture(tuple(self._steps), tuple(self._record.graphs), self._frames,
                              sum(s.seconds for s in self._steps), self._limit, self._warning)


class _Record:
    """Where one session's graphs are written, and which graph each call ran.

    It holds no model and no tensor: the functions dynamo caches point at it.
    """

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names  # id(parameter) -> its name
        self.graphs: list[StaticGraph] = []
        self.ran: list[int] = []


_recording: _Record | None = None  # the session calling its model now (set under _DYNAMO_LOCK)


def _record_only(gm: fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable:
    """The backend of every CompileSession: keep the graph, run it as is (no code generation).

    One function for all: dynamo keeps every backend it is given for good
    (``eval_frame.cached_backends``), and a backend per session would keep its model.
    """
    record = _recording
    if record is None:
        raise RuntimeError("a CompileSession traces only inside CompileSession.call")
    index = len(record.graphs)
    record.graphs.append(_static_graph(gm, "example_value",
                                       [record.names.get(id(t), "x") for t in example_inputs]))
    ran = record.ran

    def run(*args: torch.Tensor):
        ran.append(index)
        return gm.forward(*args)
    return run


def _own_forward(model: nn.Module) -> types.CodeType:
    """Give ``model`` a ``forward`` of its own code object (same name, file and line) -> that code.

    Dynamo keeps captured graphs, and counts recompiles against its limit, per
    code object. On ``StockPredictor.forward``, shared by every model, each
    learner's graphs would count against the others' limit and outlive their
    model: with ``torch.compile(isolate_recompiles=True)`` the cache held 4, 8,
    12 entries after three sessions of four lengths each, model deleted, toward
    dynamo's cap of 256 per code object. A code object of its own counts this
    learner's graphs only, and is freed with them (``_forget``).
    """
    forward = type(model).forward
    code = forward.__code__.replace()
    own = types.FunctionType(code, forward.__globals__, forward.__name__, forward.__defaults__,
                             forward.__closure__)
    model.forward = types.MethodType(own, model)
    return code


def _forget(code: types.CodeType) -> None:
    """A CompileSession is gone: drop dynamo's cache and records of its code object."""
    torch._dynamo.utils.guard_failures.pop(code, None)
    reset_code(code)


class _Heard(logging.Handler):
    """Listens to dynamo's frame converter for the warning it logs at the recompile limit."""

    LOGGER = "torch._dynamo.convert_frame"

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.limit_warning: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "recompile_limit" in message:
            self.limit_warning = message

    def __enter__(self) -> _Heard:
        logging.getLogger(self.LOGGER).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger(self.LOGGER).removeHandler(self)


def compile_capture(config: RunConfig, seq_lens: Sequence[int]) -> CompileCapture:
    """Compile the config's model once, call it at each T in ``seq_lens``, record every graph.

    The input at each T is the run's own input for that length
    ``(batch, T, features)``. Dynamo guards on the input's shape: a T it has
    not seen fails the guards and triggers a new capture, a T seen before
    reuses its graph (``CompileSession``).
    """
    if not seq_lens:
        raise ValueError("seq_lens is empty")
    session = CompileSession(config)
    for seq_len in seq_lens:
        session.call(seq_len)
    return session.capture()


def recompile_limit() -> int:
    """Graphs dynamo keeps per function before it gives up and runs the code eagerly."""
    return int(torch._dynamo.config.recompile_limit)


# --- torch.export ----------------------------------------------------------


def export_static(config: RunConfig) -> ExportOutcome:
    """``torch.export`` at the config's own shapes: x (batch, seq_len, features) -> (batch, 1)."""
    x, model = build(config)
    return _export(model, x)[0]


def export_dynamic_seq_len(config: RunConfig) -> ExportOutcome:
    """``torch.export`` with the sequence length marked dynamic (``Dim("T")``).

    On success the note says whether the exported program really ran at
    another length.
    """
    x, model = build(config)
    seq_len = torch.export.Dim("T", min=2, max=200)
    outcome, program = _export(model, x, dynamic_shapes={"x": {1: seq_len}})
    if program is not None:
        other = 3 if config.seq_len != 3 else 4
        x_other, _ = build(config.replace(seq_len=other))
        with torch.no_grad():
            same = torch.allclose(program.module()(x_other), model(x_other), atol=1e-5)
        outcome = dataclasses.replace(outcome, note=(
            f"Run at T={other}, the exported program "
            f"{'matched' if same else 'did not match'} eager mode."))
    return outcome


# --- a model whose graph depends on the data -------------------------------


class EarlyStopRNN(nn.Module):
    """A for-loop over ``nn.RNNCell`` that stops once the hidden state grows past a threshold.

    ``if h.norm(dim=1).mean() > threshold: break`` looks at the *values*, so
    how many steps run (and how long the autograd graph is) depends on the data.
    """

    def __init__(self, input_dim: int, hidden_dim: int, threshold: float, seed: int = 0):
        super().__init__()
        self.cell = nn.RNNCell(input_dim, hidden_dim)
        self.fc = nn.Linear(hidden_dim, 1)
        self.threshold = threshold
        # Own generator: reproducible without touching the process-wide seed.
        g = torch.Generator().manual_seed(seed)
        # Every parameter here has fan-in hidden_dim (the RNNCell's own rule, and
        # nn.Linear's bound for this fc): uniform in +-1/sqrt(hidden_dim).
        bound = 1 / math.sqrt(hidden_dim)
        with torch.no_grad():
            for p in self.parameters():
                p.uniform_(-bound, bound, generator=g)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (batch, seq_len, input_dim) -> (batch, 1)"""
        return self.run_steps(x)[0]

    def run_steps(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        """x: (batch, seq_len, input_dim) -> ((batch, 1), time steps actually run)"""
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
        outputs = []
        for t in range(x.shape[1]):
            h = self.cell(x[:, t, :], h)
            outputs.append(h)
            if h.norm(dim=1).mean() > self.threshold:
                break
        out = torch.stack(outputs, dim=1)  # (batch, steps run, hidden), as LoopRNN returns
        return self.fc(out[:, -1, :]), len(outputs)


class CondStopRNN(EarlyStopRNN):
    """The same early stop written with ``torch.cond``, the form export asks for.

    Both branches are traced; once the threshold is passed, every later step
    takes the branch that keeps ``h`` unchanged. The loop always runs T times.
    """

    def run_steps(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        """x: (batch, seq_len, input_dim) -> ((batch, 1), time steps in the graph)"""
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
        for t in range(x.shape[1]):
            h = torch.cond(h.norm(dim=1).mean() > self.threshold,
                           _keep, _step(self.cell), (h, x[:, t, :]))
        return self.fc(h), x.shape[1]


def _keep(h: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
    """h: (batch, hidden), x_t: (batch, input_dim) -> h, copied (cond's branches may not alias)"""
    return h.clone()


def _step(cell: nn.RNNCell) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """One more step, with the operands in cond's order: (h, x_t) -> new h (batch, hidden)."""
    return lambda h, x_t: cell(x_t, h)


@dataclass(frozen=True)
class EagerRun:
    """One eager run of ``EarlyStopRNN``: how far it got, and the graph autograd recorded."""

    label: str
    scale: float
    threshold: float
    steps: int
    seq_len: int
    graph: Graph


def early_stop_model(config: RunConfig) -> EarlyStopRNN:
    return EarlyStopRNN(config.input_size, config.hidden_size, threshold=early_stop_threshold(config),
                        seed=config.seed)


def early_stop_threshold(config: RunConfig) -> float:
    """Midway between the calm and the volatile input's first-step hidden norms.

    Chosen from the data so the two inputs part ways at any config: the
    volatile one passes it at once, the calm one (if ever) later.
    """
    x, _ = build(config)
    model = EarlyStopRNN(config.input_size, config.hidden_size, threshold=math.inf, seed=config.seed)
    with torch.no_grad():
        h0 = x.new_zeros(x.shape[0], config.hidden_size)
        calm = model.cell(x[:, 0, :] * CALM_SCALE, h0).norm(dim=1).mean().item()
        volatile = model.cell(x[:, 0, :] * VOLATILE_SCALE, h0).norm(dim=1).mean().item()
    return round((calm + volatile) / 2, 3)


def early_stop_eager(config: RunConfig) -> tuple[EagerRun, EagerRun]:
    """The early-stop model run eagerly on a calm and on a volatile input.

    x: (batch, seq_len, features), the run's input, scaled by ``CALM_SCALE``
    and ``VOLATILE_SCALE``. -> one EagerRun each, with its autograd graph.
    """
    x, _ = build(config)
    model = early_stop_model(config)
    runs = []
    for label, scale in (("calm input", CALM_SCALE), ("volatile input", VOLATILE_SCALE)):
        xs = x * scale
        with torch.enable_grad():
            output, steps = model.run_steps(xs)
        runs.append(EagerRun(label, scale, model.threshold, steps, config.seq_len,
                            capture_graph(output, model, xs)))
    return runs[0], runs[1]


def export_early_stop(config: RunConfig) -> ExportOutcome:
    """``torch.export`` of ``EarlyStopRNN``: the ``if`` on a tensor's value meets tracing."""
    x, _ = build(config)
    return _export(early_stop_model(config), x)[0]


def export_cond_stop(config: RunConfig) -> ExportOutcome:
    """``torch.export`` of the ``torch.cond`` rewrite; on success, checked against eager mode."""
    x, _ = build(config)
    eager = early_stop_model(config)
    model = CondStopRNN(config.input_size, config.hidden_size, eager.threshold, seed=config.seed)
    outcome, program = _export(model, x)
    if program is not None:
        agree = []
        for scale in (CALM_SCALE, VOLATILE_SCALE):
            with torch.no_grad():
                agree.append(torch.allclose(program.module()(x * scale), eager(x * scale), atol=1e-5))
        outcome = dataclasses.replace(outcome, note=(
            "On the calm and the volatile input the exported program "
            f"{'matched' if all(agree) else 'did NOT match'} the eager early-stop model."))
    return outcome


# --- shared -----------------------------------------------------------------


def _export(model: nn.Module, x: torch.Tensor, dynamic_shapes: dict | None = None,
            ) -> tuple[ExportOutcome, torch.export.ExportedProgram | None]:
    """x: (batch, seq_len, features) -> (outcome, the exported program or None)."""
    started = time.perf_counter()
    with _DYNAMO_LOCK:
        seen = len(convert_frame.input_codes.seen)
        try:
            program = torch.export.export(model, (x,), dynamic_shapes=dynamic_shapes)
        except Exception as error:  # the outcome itself: whatever export raised is what we show
            kind = type(error)
            return ExportOutcome(False, None, f"{kind.__module__}.{kind.__qualname__}",
                                 condense(str(error)), time.perf_counter() - started,
                                 failure=_failure_kind(error)), None
        finally:
            # Free what this export compiled (torch.cond's branches go through dynamo), and
            # only that: a global torch._dynamo.reset() would wipe every learner's CompileSession.
            for ref in convert_frame.input_codes.seen[seen:]:
                if (code := ref()) is not None:
                    reset_code(code)
    signature = program.graph_signature
    names = {**signature.inputs_to_parameters, **signature.inputs_to_buffers}
    placeholders = [names.get(n.name, n.name) for n in program.graph.nodes if n.op == "placeholder"]
    graph = _static_graph(program.graph_module, "val", placeholders)
    return ExportOutcome(True, graph, None, None, time.perf_counter() - started), program


SPECIALIZED = "specialized"


def _failure_kind(error: Exception) -> str | None:
    """Which failure the page can explain: torch's own error type, not its wording."""
    if (isinstance(error, torch._dynamo.exc.UserError)
            and error.error_type is torch._dynamo.exc.UserErrorType.CONSTRAINT_VIOLATION):
        return SPECIALIZED
    return None


# Lines of torch's error text that point at logs and docs, not at the cause.
_NOISE = re.compile(r"TORCH_LOGS|TORCHDYNAMO_|For more information|docs\.google|draft_export|"
                    r"For C\+\+ stack trace|If you suspect|^The error above occurred")


def condense(message: str, max_chars: int = 600) -> str:
    """torch's multi-paragraph error text -> its first few lines about the cause."""
    kept = []
    for line in message.splitlines():
        line = re.split(r"\s*For more information", line)[0].rstrip()
        if not line.strip() or _NOISE.search(line):
            continue
        if line.startswith(("The following call raised this error", "Caused by")):
            break
        kept.append(line)
    text = "\n".join(kept)
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


def _static_graph(gm: fx.GraphModule, meta_key: str, placeholder_names: Sequence[str]) -> StaticGraph:
    """An FX GraphModule -> plain data. Placeholders are named in order by ``placeholder_names``."""
    names = iter(placeholder_names)
    ops = []
    for node in gm.graph.nodes:
        inputs = tuple(n.name for n in node.all_input_nodes)
        shape = _shape(node.meta.get(meta_key))
        if node.op == "placeholder":
            label = next(names, node.name)
            kind = "input" if label in ("x", "l_x_") else "parameter"
            ops.append(FxOp(node.name, kind, label, shape, inputs))
        elif node.op == "output":
            ops.append(FxOp(node.name, "output", "output", shape, inputs))
        elif node.op == "get_attr":
            ops.append(FxOp(node.name, "branch", str(node.target), shape, inputs))
        else:
            ops.append(FxOp(node.name, "op", _target_label(node), shape, inputs))
    return StaticGraph(tuple(ops), gm.code.strip())


def _target_label(node: fx.Node) -> str:
    target = node.target
    if not callable(target):
        return str(target)
    if isinstance(target, torch._ops.OpOverload | torch._ops.HigherOrderOperator):
        return str(target).removesuffix(".default")
    name = fx.node._get_qualified_name(target)
    name = name.removeprefix("_operator.").replace("torch._C._nn.", "F.")
    if name == "getitem" and len(node.args) > 1:
        return f"getitem [{_index(node.args[1])}]"
    return name


def _index(index: object) -> str:
    if isinstance(index, tuple):
        return ", ".join(_index(i) for i in index)
    if isinstance(index, slice):
        return ":" if index == slice(None) else f"{index.start}:{index.stop}"
    return str(index)


def _shape(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return str(tuple(value.shape))
    if isinstance(value, (tuple, list)):
        parts = [_shape(v) for v in value]
        return ", ".join(p for p in parts if p)
    return ""


def fx_dot(graph: StaticGraph) -> str:
    """A static FX graph as top-down DOT, through the app's one DOT writer.

    Parameters are drawn once per use (no hub wired to every step), so
    Graphviz's ``dot`` layout stays fast on these small graphs.
    """
    return write_statements(fx_statements(graph), "fx")


def fx_statements(graph: StaticGraph) -> Iterator[tuple[str, object, dict[str, str]]]:
    """``write_statements``'s statements: defaults, then each op and each parameter use with its edges."""
    yield "graph", None, {"rankdir": "TB", "nodesep": "0.25", "ranksep": "0.3", "bgcolor": "transparent"}
    yield "node", None, {"shape": "box", "style": "filled", "fontname": theme.FONT_FAMILY, "fontsize": "12",
                         "fontcolor": theme.TEXT, "color": theme.BORDER, "penwidth": "0.8"}
    yield "edge", None, {"color": theme.GRAPH_EDGE, "arrowsize": "0.6"}
    kinds = {op.name: op for op in graph.ops}
    for op in graph.ops:
        if op.kind == "parameter":
            continue
        label = op.label if not op.shape else f"{op.label}\\n{op.shape}"
        yield "N", op.name, {"label": label, "fillcolor": theme.GRAPH_FILL.get(op.kind, "#FFFFFF")}
        for src in op.inputs:
            if kinds[src].kind == "parameter":
                use = f"{src}@{op.name}"
                yield "N", use, {"label": kinds[src].label, "fillcolor": theme.GRAPH_FILL["parameter"],
                                 "fontsize": "10", "shape": "note"}
                yield "E", (use, op.name), {}
            else:
                yield "E", (src, op.name), {}


def drawn_node_count(graph: StaticGraph) -> int:
    """Nodes ``fx_dot`` would draw: every non-parameter node plus one box per parameter use."""
    params = {op.name for op in graph.ops if op.kind == "parameter"}
    return sum(op.kind != "parameter" for op in graph.ops) + sum(
        src in params for op in graph.ops for src in op.inputs)



# --- What the page says about the outcomes -----------------------------------------

WHEN_STATIC_WINS = (
    "Fair is fair. A graph known in full before it runs can be **optimised as a whole**: "
    "compilers fuse ops, plan memory and generate kernels for it (what `torch.compile`'s real "
    "backends do after the capture you saw). And it can be **deployed without Python**: an "
    "exported program is saved and run on servers, phones or accelerators that never import "
    "your model's code. Dynamic graphs win while you write, change and debug the model; static "
    "graphs win once it stops changing and has to run fast, or somewhere else. PyTorch now gives "
    "you both from the same code, as long as the code keeps shapes and branches the tracer can "
    "follow."
)


def why_dynamic_export_failed(outcome: ExportOutcome, seq_len: int) -> str:
    """Why ``export_dynamic_seq_len`` failed, in words, from the kind of failure torch reported."""
    if seq_len == 1:
        return ("Here the example itself has T = 1, and export always fixes sizes of 0 and 1 "
                "to constants: try T of 2 or more to see what the recurrent layer does.")
    if outcome.failure == SPECIALIZED:
        return ("Export promised a graph valid for *any* T, then found the traced code fixes "
                "T to this run's value (the recurrent layer is traced as a fixed number of "
                "steps), so it refused rather than ship a graph that is wrong for other lengths.")
    return "Export could not keep T as a symbol; torch's message below says why."


def explain_recompiles(capture: CompileCapture) -> str:
    """What the calls and graphs of one compile session say (markdown)."""
    lengths, graphs, limit = len(capture.seq_lens), len(capture.graphs), capture.limit
    if capture.limit_reached:
        eager = list(dict.fromkeys(s.seq_len for s in capture.steps if s.eager))
        return (f"Dynamo keeps at most **{limit} graphs** for one function "
                f"(`torch._dynamo.config.recompile_limit`). T = {eager[0]} would have been graph "
                f"{graphs + 1}: dynamo logged the warning below, stopped compiling `forward` and "
                f"ran it **eagerly**, as plain PyTorch, for every new length since (T = "
                f"{', '.join(map(str, eager))}). The {graphs} lengths it captured still run their "
                "graphs.")
    if lengths == 1:
        return (f"Move **Sequence length T**: every new length you try runs through this one "
                f"compiled model, and dynamo keeps up to {limit} graphs for it.")
    if graphs == lengths:
        left = limit - graphs
        return ("Each new T broke a **guard**, dynamo's check that the input still has the shape it "
                "traced, so it traced the model again: one static graph per length, each holding T "
                f"as a fixed number (input shapes {', '.join(g.input_shape() for g in capture.graphs)}). "
                "Going back to a length already seen passes that graph's guards and runs it again: "
                f"no new graph. {left} more new length{'s' if left != 1 else ''} and dynamo reaches "
                f"its limit of {limit} graphs.")
    if capture.symbolic:
        return (f"{lengths} lengths needed only {graphs} graphs: dynamo made T a "
                "symbol (dynamic shapes) and one graph served several lengths.")
    return f"{lengths} lengths, {graphs} graphs: the table says what dynamo did on each call."


def compile_steps_table(capture: CompileCapture) -> list[dict[str, object]]:
    """One row per call through the compiled model: its T and what dynamo did."""
    def did(step: CompileStep) -> str:
        if step.eager:
            return "ran eagerly: recompile limit reached"
        if step.new_graph:
            return f"captured graph {step.graph_index + 1}"
        return f"reused graph {step.graph_index + 1}"

    return [{"call": i + 1, "T": s.seq_len, "what dynamo did": did(s), "graphs so far": s.graphs_so_far,
             "ms": round(s.seconds * 1e3, 1)} for i, s in enumerate(capture.steps)]


def ops_table(graph: StaticGraph) -> list[dict[str, str]]:
    """The exported graph's inputs and ops, one row each, with their output shapes."""
    return [{"node": op.name, "op": op.label, "output shape": op.shape}
            for op in graph.ops if op.kind in ("input", "op", "branch")]


@functools.cache  # the source does not change while the server runs: 0.7 ms a call, every rerun
def steps_source(model: type[EarlyStopRNN]) -> str:
    """The ``run_steps`` method of an early-stop model, as a learner reads it."""
    return textwrap.dedent(inspect.getsource(model.run_steps))
