"""The code a learner runs to reproduce a run: stockdemo/model.py's own classes, then the run.

Nothing here writes a model: the classes are ``inspect.getsource`` of ``StockPredictor``
(and ``LoopRNN`` for a loop cell), so the code on screen is the code that ran. What
follows them is the seed snippet's order (``torch.manual_seed``, ``torch.randn``, the
model), which ``stockdemo.live.run.build`` follows too: the printed predictions are the
page's, to the last digit.
"""

from __future__ import annotations

import functools
import inspect

from stockdemo.cells import cell_of, is_loop
from stockdemo.config import RunConfig
from stockdemo.model import LoopRNN, StockPredictor


@functools.cache  # the source does not change while the server runs
def class_source(cls: type) -> str:
    """A class of stockdemo/model.py as its file has it."""
    return inspect.getsource(cls)


def layer_code(cell: str) -> str | None:
    """The ``rnn=`` argument a cell takes, as code: 'nn.GRU', 'partial(LoopRNN, cell=nn.GRUCell)';
    None for the seed's own nn.RNN (StockPredictor's default)."""
    row = cell_of(cell)
    if is_loop(cell):
        return f"partial(LoopRNN, cell=nn.{row.loop_cell.__name__})"
    default = inspect.signature(StockPredictor).parameters["rnn"].default
    return None if row.module is default else f"nn.{row.module.__name__}"


def reproduce_code(config: RunConfig) -> str:
    """Standalone PyTorch code that reproduces this run's predictions exactly."""
    c = config
    loop = is_loop(c.cell)
    classes = [LoopRNN, StockPredictor] if loop else [StockPredictor]
    layer = layer_code(c.cell)
    imports = "import torch\n" + ("from functools import partial\n" * loop) + "from torch import nn\n"
    model = (f"model = StockPredictor(input_dim={c.input_size}, hidden_dim={c.hidden_size},\n"
             f"                       num_layers={c.num_layers}, output_dim=1"
             + (f",\n                       rnn={layer})" if layer else ")"))
    return (imports + "\n\n" + "\n\n".join(class_source(cls) for cls in classes) + f"""

torch.manual_seed({c.seed})
input_data = torch.randn({c.batch_size}, {c.seq_len}, {c.input_size})  # batch, time steps, features
{model}
predictions = model(input_data)  # shape ({c.batch_size}, 1)
print(predictions)
""")
