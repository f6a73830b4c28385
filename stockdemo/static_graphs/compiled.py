"""``torch.compile`` live: one model called at one sequence length after another.

``CompileSession`` runs ``torch.compile`` with a backend that only records the FX
graphs dynamo hands it (no code generation), one sequence length at a time, kept
between a learner's moves: it counts how many graphs (recompiles) the lengths took,
which graph each call ran, and when dynamo's recompile limit made it run the model
eagerly. ``compile_capture`` replays a list of lengths through a new one.
"""

from __future__ import annotations

import logging
import re
import time
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import fx, nn
from torch._C._dynamo.eval_frame import reset_code

from stockdemo.config import RunConfig
from stockdemo.i18n import tr, trn
from stockdemo.live.run import build
from stockdemo.static_graphs.fx_graph import DYNAMO_LOCK, StaticGraph, static_graph


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
        with DYNAMO_LOCK, torch._dynamo.config.patch(allow_rnn=True), heard:
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


_recording: _Record | None = None  # the session calling its model now (set under DYNAMO_LOCK)


def _record_only(gm: fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable:
    """The backend of every CompileSession: keep the graph, run it as is (no code generation).

    One function for all: dynamo keeps every backend it is given for good
    (``eval_frame.cached_backends``), and a backend per session would keep its model.
    """
    record = _recording
    if record is None:
        raise RuntimeError("a CompileSession traces only inside CompileSession.call")
    index = len(record.graphs)
    record.graphs.append(static_graph(gm, "example_value",
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


def explain_recompiles(capture: CompileCapture) -> str:
    """What the calls and graphs of one compile session say (markdown)."""
    lengths, graphs, limit = len(capture.seq_lens), len(capture.graphs), capture.limit
    if capture.limit_reached:
        eager = list(dict.fromkeys(s.seq_len for s in capture.steps if s.eager))
        return tr("Dynamo keeps at most **{limit} graphs** for one function "
                  "(`torch._dynamo.config.recompile_limit`). T = {first} would have been graph {next}: "
                  "dynamo logged the warning below, stopped compiling `forward` and ran it **eagerly**, "
                  "as plain PyTorch, for every new length since (T = {lengths}). The {graphs} lengths it "
                  "captured still run their graphs.", limit=limit, first=eager[0], next=graphs + 1,
                  lengths=", ".join(map(str, eager)), graphs=graphs)
    if lengths == 1:
        return tr("Move **Sequence length T**: every new length you try runs through this one compiled "
                  "model, and dynamo keeps up to {limit} graphs for it.", limit=limit)
    if graphs == lengths:
        return trn("Each new T broke a **guard**, dynamo's check that the input still has the shape it "
                   "traced, so it traced the model again: one static graph per length, each holding T as "
                   "a fixed number (input shapes {shapes}). Going back to a length already seen passes "
                   "that graph's guards and runs it again: no new graph. {n} more new length and dynamo "
                   "reaches its limit of {limit} graphs.",
                   "Each new T broke a **guard**, dynamo's check that the input still has the shape it "
                   "traced, so it traced the model again: one static graph per length, each holding T as "
                   "a fixed number (input shapes {shapes}). Going back to a length already seen passes "
                   "that graph's guards and runs it again: no new graph. {n} more new lengths and dynamo "
                   "reaches its limit of {limit} graphs.", limit - graphs,
                   shapes=", ".join(g.input_shape() for g in capture.graphs), limit=limit)
    if capture.symbolic:
        return tr("{lengths} lengths needed only {graphs} graphs: dynamo made T a symbol (dynamic shapes) "
                  "and one graph served several lengths.", lengths=lengths, graphs=graphs)
    return tr("{lengths} lengths, {graphs} graphs: the table says what dynamo did on each call.",
              lengths=lengths, graphs=graphs)


def compile_steps_table(capture: CompileCapture) -> list[dict[str, object]]:
    """One row per call through the compiled model: its T and what dynamo did."""
    def did(step: CompileStep) -> str:
        if step.eager:
            return tr("ran eagerly: recompile limit reached")
        if step.new_graph:
            return tr("captured graph {index}", index=step.graph_index + 1)
        return tr("reused graph {index}", index=step.graph_index + 1)

    call, what, so_far = tr("call"), tr("what dynamo did"), tr("graphs so far")
    return [{call: i + 1, "T": s.seq_len, what: did(s), so_far: s.graphs_so_far,
             "ms": round(s.seconds * 1e3, 1)} for i, s in enumerate(capture.steps)]
