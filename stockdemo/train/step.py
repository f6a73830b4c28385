"""One training step's autograd graph, and its record with a replay: prediction through loss.

The step is the MSE loss of one batch (``training_loss``), recorded like any run
(``stockdemo.graph.capture.record_steps``, tagged with the model's steps and layers), so the
Train page's graph and its replay have the Playground's node ids and views.
"""

from __future__ import annotations

import torch
from torch import nn

from stockdemo.config import TRAIN_BATCH_SIZE, TrainConfig
from stockdemo.graph import OUTPUT_ID, Graph
from stockdemo.graph.capture import capture_graph, record_steps
from stockdemo.graph.lines import LineRecorder
from stockdemo.live.run import build, in_stockdemo
from stockdemo.train.windows import Dataset


def training_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x: (batch, seq_len, features), y: (batch, 1) -> () the batch's mean squared error"""
    return nn.functional.mse_loss(model(x), y)


def training_step_graph(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Graph:
    """The autograd graph of one training step, prediction through loss.

    x: (batch, seq_len, features), y: (batch, 1). Nothing is stepped: the
    graph is recorded by the forward pass and the loss alone.
    """
    with torch.enable_grad():
        loss = training_loss(model, x, y)  # () scalar
    graph = capture_graph(loss, model, x)
    nodes = tuple(n._replace(label="loss (MSE)") if n.id == OUTPUT_ID else n for n in graph.nodes)
    return Graph(nodes, graph.edges, graph.meta)


def training_step_record(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    """One training step recorded with each node's line in stockdemo's code and a real backward
    of the loss (``record_steps``, with ``replay``): the ids of ``training_step_graph``'s nodes.
    x: (batch, seq_len, features), y: (batch, 1). The parameters' ``.grad`` stay as they were."""
    lines = LineRecorder(in_stockdemo, loops=False)
    with torch.enable_grad(), lines:
        loss = training_loss(model, x, y)  # () scalar
    return record_steps(loss, model, x, lines, replay=True)


def first_step_record(dataset: Dataset, config: TrainConfig) -> dict:
    """``training_step_record`` of the first step of ``train.training.train(dataset, config)``: its
    model as built, its first batch; the gradients are the ones that step really had."""
    _, model = build(config.model_config)  # as train() builds it: seeded
    shuffle = torch.Generator().manual_seed(config.seed)  # train()'s batch order
    train = dataset.part("train")
    first = torch.randperm(len(dataset.x[train]), generator=shuffle)[:TRAIN_BATCH_SIZE]
    x = torch.from_numpy(dataset.x[train])[first]  # (batch, seq_len, features)
    y = torch.from_numpy(dataset.y[train]).unsqueeze(1)[first]  # (batch, 1)
    return training_step_record(model, x, y)
