"""The recurrent cells a run can use, declared once: the built-in layer, the cell its loop steps.

Each name is a value of the ``cell`` knob. "rnn", "gru" and "lstm" run the built-in
layer, every step inside one call; "rnn_loop", "gru_loop" and "lstm_loop" run
``LoopRNN``, a Python ``for`` loop over the matching cell, whose graph always grows
with T. Menus, the model, the reproduced code and the training estimate all read
this one table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

from torch import nn

from stockdemo.i18n import N_
from stockdemo.model import LoopRNN

LOOP = "_loop"  # "gru_loop": the for-loop over nn.GRUCell


class Cell(NamedTuple):
    module: type[nn.Module]  # every step in one call, e.g. nn.RNN
    loop_cell: type[nn.Module]  # one step, called by LoopRNN's for loop, e.g. nn.RNNCell
    label: str  # what a menu calls the built-in
    gates: int  # weight blocks per layer (RNN 1, GRU 3, LSTM 4): the work per step


BUILT_IN: dict[str, Cell] = {
    "rnn": Cell(nn.RNN, nn.RNNCell, "nn.RNN", 1),
    "gru": Cell(nn.GRU, nn.GRUCell, "nn.GRU", 3),
    "lstm": Cell(nn.LSTM, nn.LSTMCell, N_("nn.LSTM (fused on CPU)"), 4),
}
_LOOP_LABELS = {"rnn": N_("for-loop over nn.RNNCell"), "gru": N_("for-loop over nn.GRUCell"),
                "lstm": N_("for-loop over nn.LSTMCell")}
CELLS: tuple[str, ...] = (*BUILT_IN, *(name + LOOP for name in BUILT_IN))
CELL_LABELS: dict[str, str] = {
    **{name: cell.label for name, cell in BUILT_IN.items()},
    # msgids (a menu says them through tr), one per cell: "for-loop over nn.RNNCell"
    **{name + LOOP: _LOOP_LABELS[name] for name in BUILT_IN},
}


def cell_of(name: str) -> Cell:
    """'gru' or 'gru_loop' -> the GRU's row of the table."""
    return BUILT_IN[name.removesuffix(LOOP)]


def is_loop(name: str) -> bool:
    return name.endswith(LOOP)


def recurrent_layer(name: str) -> Callable[..., nn.Module]:
    """'gru' -> nn.GRU; 'gru_loop' -> LoopRNN stepping nn.GRUCell: what ``StockPredictor(rnn=)`` takes."""
    cell = cell_of(name)
    return functools.partial(LoopRNN, cell=cell.loop_cell) if is_loop(name) else cell.module
