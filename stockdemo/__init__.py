"""stockdemo: watch PyTorch build a new autograd graph on every run of a small stock RNN."""

import os

# Before torch loads: OpenMP reads its thread count once, at load, for every thread
# the process will start (torch.set_num_threads only sets the calling thread's, and
# Streamlit runs each rerun on a new thread). The models are tiny: one thread per op
# is the fast setting. A caller's OMP_NUM_THREADS wins.
os.environ.setdefault("OMP_NUM_THREADS", os.environ.get("STOCKDEMO_TORCH_THREADS", "1"))

from stockdemo.config import RunConfig
from stockdemo.graph import Graph
from stockdemo.graph.capture import capture_graph
from stockdemo.graph.diff import graph_diff
from stockdemo.live.run import RunResult, run
from stockdemo.model import StockPredictor

__all__ = ["Graph", "RunConfig", "RunResult", "StockPredictor", "capture_graph", "graph_diff", "run"]


def __getattr__(name: str):
    """``stockdemo.show`` and ``stockdemo.compare`` (stockdemo.notebook), imported on first use:
    ``import stockdemo`` alone does not need anywidget."""
    if name in ("show", "compare"):
        from stockdemo import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'stockdemo' has no attribute {name!r}")
