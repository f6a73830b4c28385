"""``torch.export`` live: what it accepts, what it rejects, with torch's own error.

``export_static`` / ``export_dynamic_seq_len`` export the run's model with the sequence
length fixed, then marked dynamic (``torch.export.Dim``); ``export_early_stop`` and
``export_cond_stop`` export the data-dependent model and its ``torch.cond`` rewrite
(stockdemo/static_graphs/early_stop.py). Every outcome, success or the real exception, is
whatever torch does now.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass

import torch
from torch import nn
from torch._C._dynamo.eval_frame import reset_code
from torch._dynamo import convert_frame

from stockdemo.config import RunConfig
from stockdemo.i18n import N_, Message, later, tr
from stockdemo.live.run import build
from stockdemo.static_graphs.early_stop import CALM_SCALE, VOLATILE_SCALE, CondStopRNN, early_stop_model
from stockdemo.static_graphs.fx_graph import DYNAMO_LOCK, StaticGraph, static_graph


@dataclass(frozen=True)
class ExportOutcome:
    """What ``torch.export.export`` did: an exported graph, or the exception it raised."""

    ok: bool
    graph: StaticGraph | None
    error_type: str | None  # e.g. "torch._dynamo.exc.UserError"
    message: str | None  # the error text, condensed
    seconds: float
    note: Message | str = ""  # extra facts measured after a success (cached: said when shown)
    # SPECIALIZED when torch reports that a size marked dynamic was fixed by the traced code
    failure: str | None = None

    @property
    def error_name(self) -> str | None:
        return self.error_type.rsplit(".", 1)[-1] if self.error_type else None


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
            later("Run at T={T}, the exported program matched eager mode.", T=other) if same else
            later("Run at T={T}, the exported program did not match eager mode.", T=other)))
    return outcome


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
            later("On the calm and the volatile input the exported program matched the eager early-stop "
                  "model.") if all(agree) else
            later("On the calm and the volatile input the exported program did NOT match the eager "
                  "early-stop model.")))
    return outcome


# --- shared -----------------------------------------------------------------


def _export(model: nn.Module, x: torch.Tensor, dynamic_shapes: dict | None = None,
            ) -> tuple[ExportOutcome, torch.export.ExportedProgram | None]:
    """x: (batch, seq_len, features) -> (outcome, the exported program or None)."""
    started = time.perf_counter()
    with DYNAMO_LOCK:
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
    graph = static_graph(program.graph_module, "val", placeholders)
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


WHEN_STATIC_WINS = N_(
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
        return tr("Here the example itself has T = 1, and export always fixes sizes of 0 and 1 to "
                  "constants: try T of 2 or more to see what the recurrent layer does.")
    if outcome.failure == SPECIALIZED:
        return tr("Export promised a graph valid for *any* T, then found the traced code fixes T to this "
                  "run's value (the recurrent layer is traced as a fixed number of steps), so it refused "
                  "rather than ship a graph that is wrong for other lengths.")
    return tr("Export could not keep T as a symbol; torch's message below says why.")
