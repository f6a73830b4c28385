"""The same model captured as static graphs: ``torch.compile`` and ``torch.export``, live.

Eager autograd records a fresh graph on every run. The static tools trace the
model once into an FX graph and reuse it while its *guards* hold. One module each:

- ``compiled``: ``CompileSession``, the model under ``torch.compile``, one sequence
  length after another: graphs captured, reused, and the recompile limit;
- ``exported``: ``torch.export`` at a fixed and at a dynamic sequence length, and of
  the data-dependent model, each outcome classified;
- ``early_stop``: ``EarlyStopRNN``, whose loop stops on a value (a data-dependent
  ``if``), and its ``torch.cond`` rewrite;
- ``fx_graph``: an FX graph as plain data (``StaticGraph``) and as DOT.

Every outcome, success or the real exception, is whatever torch does now:
nothing here is written in advance. Pages and tests use the names from here, as
``static.compile_capture``.
"""

from __future__ import annotations

from stockdemo.static_graphs.compiled import (
    CompileCapture,
    CompileSession,
    CompileStep,
    compile_capture,
    compile_steps_table,
    explain_recompiles,
    recompile_limit,
)
from stockdemo.static_graphs.early_stop import (
    CALM_SCALE,
    COND_MAX_T,
    VOLATILE_SCALE,
    CondStopRNN,
    EagerRun,
    EarlyStopRNN,
    early_stop_eager,
    early_stop_model,
    early_stop_threshold,
    steps_source,
)
from stockdemo.static_graphs.exported import (
    SPECIALIZED,
    WHEN_STATIC_WINS,
    ExportOutcome,
    condense,
    export_cond_stop,
    export_dynamic_seq_len,
    export_early_stop,
    export_static,
    why_dynamic_export_failed,
)
from stockdemo.static_graphs.fx_graph import (
    MAX_DRAWN_FX_NODES,
    FxOp,
    StaticGraph,
    drawn_node_count,
    fx_dot,
    fx_statements,
    ops_table,
)

__all__ = [
    "CALM_SCALE", "COND_MAX_T", "MAX_DRAWN_FX_NODES", "SPECIALIZED", "VOLATILE_SCALE",
    "WHEN_STATIC_WINS", "CompileCapture", "CompileSession", "CompileStep", "CondStopRNN", "EagerRun",
    "EarlyStopRNN", "ExportOutcome", "FxOp", "StaticGraph", "compile_capture", "compile_steps_table",
    "condense", "drawn_node_count", "early_stop_eager", "early_stop_model", "early_stop_threshold",
    "explain_recompiles", "export_cond_stop", "export_dynamic_seq_len", "export_early_stop",
    "export_static", "fx_dot", "fx_statements", "ops_table", "recompile_limit", "steps_source",
    "why_dynamic_export_failed",
]
