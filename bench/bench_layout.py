"""The general layout of any model's graph: time and edge crossings, ours against igraph's
and ELK's layered layouts of the whole graph.

    python bench/bench_layout.py [--repeats 3] [--no-elk] [--big 5000]

For the six models of issue 34 and hand-written RNN loops (T 1,000 and T ``--big``):

- ``run``: the model's forward pass under ``LineRecorder``; ``record``: ``raw_graph`` and
  ``graph_of_record``; ``auto``/``unrolled``: ``layout_code`` (the picture the page draws,
  and every node drawn); ``boxes`` drawn in auto; ``x`` crossings of straight edges between
  box centres in the auto picture (affine-invariant, so units do not matter), ``x all``
  in the unrolled one (every node, as the flat layouts draw);
- ``igraph flat``: ``Graph.layout_sugiyama`` of the whole graph, no blocks (ms, crossings);
- ``ELK flat``: elkjs 0.12.1's layered layout in Node (``bench/elk``; ``npm ci`` there
  first), the time inside Node, then its crossings. The app cannot use it at run time:
  the server has no Node.

Medians in ms. ``calibration`` is a fixed pure-Python loop (200,000 dict inserts): on a
loaded box every figure grows with it, so compare runs at a like calibration.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

import igraph  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from harness.helpers import ROOT  # noqa: E402
from stockdemo.code.view import draws_steps_and_layers, picture_of_run  # noqa: E402
from stockdemo.graph.ids import graph_of_record  # noqa: E402
from stockdemo.graph.recorder import LineRecorder, raw_graph  # noqa: E402
from stockdemo.layout.by_code import layout_code  # noqa: E402
from stockdemo.layout.picture import box_size  # noqa: E402
from stockdemo.model import StockPredictor  # noqa: E402

ELK_DIR = ROOT / "bench" / "elk"
FLAT_LIMIT = 3_000  # nodes: past this the flat layouts are not tried (igraph: minutes at 11,000)
CROSSINGS_LIMIT = 8_000  # edges: the pairwise count is quadratic


class Encoder(nn.Module):
    def __init__(self, layers: int = 6, d: int = 16):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.encoder(x)[:, -1])


class Residual(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class ResidualCNN(nn.Module):
    def __init__(self, c: int = 8, blocks: int = 3):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.Sequential(*(Residual(c) for _ in range(blocks)))
        self.fc = nn.Linear(c, 1)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean(dim=(2, 3)))


class CellLoop(nn.Module):
    """A hand-written loop over a cell: nn.RNNCell, or nn.LSTMCell (h and c)."""

    def __init__(self, cell: type[nn.Module] = nn.RNNCell, hidden: int = 8):
        super().__init__()
        self.cell, self.fc = cell(3, hidden), nn.Linear(hidden, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.fc.in_features)
        c = h
        for t in range(x.shape[1]):
            if isinstance(self.cell, nn.LSTMCell):
                h, c = self.cell(x[:, t], (h, c))
            else:
                h = self.cell(x[:, t], h)
        return self.fc(h)


class WhileRNN(CellLoop):
    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.fc.in_features)
        t = 0
        while t < x.shape[1] and h.norm() < 3.0:  # the data decides how many steps
            h = self.cell(x[:, t], h)
            t += 1
        return self.fc(h)


def models(big: int) -> list[tuple[str, nn.Module, torch.Tensor]]:
    torch.manual_seed(0)
    return [
        ("seed", StockPredictor(3, 10, 1, 1), torch.randn(10, 5, 3)),
        ("GRU T 200 L 4", StockPredictor(3, 10, 4, 1, rnn=nn.GRU), torch.randn(10, 200, 3)),
        ("TransformerEncoder 6", Encoder(), torch.randn(4, 10, 16)),
        ("residual CNN", ResidualCNN(), torch.randn(2, 3, 16, 16)),
        ("LSTM loop cell T 20", CellLoop(nn.LSTMCell), torch.randn(10, 20, 3)),
        ("while (data)", WhileRNN(), torch.randn(10, 50, 3)),
        ("RNN loop T 1,000", CellLoop(), torch.randn(2, 1000, 3)),
        (f"RNN loop T {big:,}", CellLoop(), torch.randn(2, big, 3)),
    ]


def median_ms(fn, repeats: int):
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), value


def crossings(xy: np.ndarray, edges: list[tuple[int, int]]) -> int | None:
    """Pairs of straight edges that cross (sharing no end), or None past CROSSINGS_LIMIT."""
    if len(edges) > CROSSINGS_LIMIT:
        return None
    if len(edges) < 2:
        return 0
    e = np.array(edges)
    p, q = xy[e[:, 0]], xy[e[:, 1]]
    total = 0
    for i in range(len(e) - 1):
        a, b, c, d = p[i], q[i], p[i + 1:], q[i + 1:]
        shared = (e[i + 1:] == e[i, 0]).any(axis=1) | (e[i + 1:] == e[i, 1]).any(axis=1)

        def side(o, s, t):
            return np.sign((s[..., 0] - o[..., 0]) * (t[..., 1] - o[..., 1])
                           - (s[..., 1] - o[..., 1]) * (t[..., 0] - o[..., 0]))

        hit = (side(a, b, c) * side(a, b, d) < 0) & (side(c, d, a) * side(c, d, b) < 0)
        total += int((hit & ~shared).sum())
    return total


def picture_crossings(picture) -> int | None:
    index = {p.id: k for k, p in enumerate(picture.nodes)}
    xy = np.array([(p.x, p.y) for p in picture.nodes])
    return crossings(xy, [(index[e.src], index[e.dst]) for e in picture.edges])


def flat(graph) -> tuple[list[str], list[tuple[int, int]], list[tuple[float, float]]]:
    ids = [n.id for n in graph.nodes]
    index = {i: k for k, i in enumerate(ids)}
    sizes = [box_size(n.label + ("\n" + "x".join(map(str, n.shape)) if n.shape else ""))
             for n in graph.nodes]
    return ids, [(index[a], index[b]) for a, b in graph.edges], sizes


def igraph_flat(graph) -> tuple[float, int | None]:
    ids, edges, _ = flat(graph)
    start = time.perf_counter()
    coords = igraph.Graph(n=len(ids), edges=edges, directed=True).layout_sugiyama().coords
    ms = (time.perf_counter() - start) * 1000
    return ms, crossings(np.array(coords), edges)


def elk_flat(graph, timeout: float) -> tuple[float, float, int | None] | str:
    """-> (ms inside Node, ms with Node's start, crossings), or why not."""
    if shutil.which("node") is None or not (ELK_DIR / "node_modules" / "elkjs").is_dir():
        return "no Node or no bench/elk/node_modules (npm ci in bench/elk)"
    ids, edges, sizes = flat(graph)
    nodes = [{"id": str(k), "width": w, "height": h} for k, (w, h) in enumerate(sizes)]
    payload = json.dumps({"nodes": nodes, "edges": [[str(a), str(b)] for a, b in edges]})
    start = time.perf_counter()
    try:
        done = subprocess.run(["node", "layout.mjs"], cwd=ELK_DIR, input=payload, capture_output=True,
                              text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s"
    wall = (time.perf_counter() - start) * 1000
    out = json.loads(done.stdout)
    return out["ms"], wall, crossings(np.column_stack([out["x"], out["y"]]), edges)


def calibration_ms() -> float:
    start = time.perf_counter()
    d = {}
    for i in range(200_000):
        d[f"k{i}"] = i
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big", type=int, default=5000, help="T of the largest hand-written loop")
    parser.add_argument("--no-elk", action="store_true")
    parser.add_argument("--elk-timeout", type=float, default=120.0)
    args = parser.parse_args()
    print(f"calibration {calibration_ms():.0f} ms")
    head = (f"{'model':22} {'nodes':>7} {'run':>7} {'record':>7} {'auto':>7} {'unrolled':>8} "
            f"{'boxes':>6} {'x':>5} {'x all':>6} | {'igraph flat':>16} | ELK flat (in Node, with start)")
    print(head)
    for name, model, x in models(args.big):
        bench_model(name, model, x, args)


def bench_model(name: str, model: nn.Module, x: torch.Tensor, args: argparse.Namespace) -> None:
    def run():
        with LineRecorder() as lines:
            return model(x), lines
    run_ms, (output, lines) = median_ms(run, args.repeats)
    params = dict(model.named_parameters())
    record_ms, graph = median_ms(lambda: graph_of_record(raw_graph(output, lines, params)), args.repeats)
    auto_ms, picture = median_ms(lambda: layout_code(graph, "auto"), args.repeats)
    unrolled_ms, whole = median_ms(lambda: layout_code(graph, "unrolled"), args.repeats)
    row = (f"{name:22} {len(graph.nodes):>7,} {run_ms:>7.0f} {record_ms:>7.0f} {auto_ms:>7.0f} "
           f"{unrolled_ms:>8.0f} {len(picture.nodes):>6,} {_n(picture_crossings(picture)):>5} "
           f"{_n(picture_crossings(whole)):>6}")
    if len(graph.nodes) <= FLAT_LIMIT:
        ms, x_ = igraph_flat(graph)
        row += f" | {ms:>8.0f} ms {_n(x_):>5}"
        if not args.no_elk:
            elk = elk_flat(graph, args.elk_timeout)
            row += f" | {elk}" if isinstance(elk, str) else \
                f" | {elk[0]:>8.0f} {elk[1]:>8.0f} ms {_n(elk[2]):>7}"
    else:
        row += f" | (flat layouts not tried past {FLAT_LIMIT:,} nodes)"
    print(row, flush=True)
    if draws_steps_and_layers(model, (x,)):
        ms, shown = median_ms(lambda: picture_of_run(output, model, lines, inputs=x), args.repeats)
        print(f"{'  as StockPredictor':22} {'':>7} {'':>7} {'':>7} {ms:>7.0f} {'':>8} "
              f"{len(shown.nodes):>6,} {_n(picture_crossings(shown)):>5}  (steps x layers)")


def _n(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


if __name__ == "__main__":
    main()
