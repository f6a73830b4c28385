"""stockdemo: watch PyTorch build a new autograd graph on every run of a small stock RNN."""

from stockdemo.config import RunConfig
from stockdemo.graph import Graph, capture_graph, graph_diff
from stockdemo.live import RunResult, run
from stockdemo.model import StockPredictor

__all__ = ["Graph", "RunConfig", "RunResult", "StockPredictor", "capture_graph", "graph_diff", "run"]
