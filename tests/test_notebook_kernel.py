"""stockdemo.show in a real Jupyter kernel (nbclient + ipykernel) on issue 34's six models.

The notebook is written here: it defines the six models in its own cells (the seed, a GRU
at T 200 with 4 layers, nn.TransformerEncoder with 6 layers, a small residual CNN from
nn.Conv2d, an LSTM loop cell, a model with a data-dependent while), shows each, and prints
autograd's own count of the same run's ops (a plain grad_fn walk). The widgets' state is
what nbclient kept of the kernel's messages to the front end, so the check reads the
graph the browser would get.
"""

from __future__ import annotations

import json
from collections import Counter

import nbformat
import pytest
from nbclient import NotebookClient

from harness.helpers import ROOT
from stockdemo.render.payload import node_text

SETUP = """\
import json
import torch
from torch import nn
import stockdemo
from harness.autograd import ops_by_type
from stockdemo.cells import recurrent_layer
from stockdemo.model import StockPredictor
"""

MODELS = """\
class TransformerRegressor(nn.Module):
    def __init__(self, d_model=16, heads=2, layers=6):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=32, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, 1)

    def forward(self, x):
        return self.fc(self.encoder(x).mean(dim=1))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class ResidualCNN(nn.Module):
    def __init__(self, channels=8, blocks=3):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.Sequential(*(ResidualBlock(channels) for _ in range(blocks)))
        self.fc = nn.Linear(channels, 1)

    def forward(self, x):
        return self.fc(self.blocks(torch.relu(self.stem(x))).mean(dim=(2, 3)))


class UntilNorm(nn.Module):
    def __init__(self, features=3, hidden=10):
        super().__init__()
        self.cell = nn.RNNCell(features, hidden)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
        steps = 0
        while h.norm() < 2.5 and steps < 50:
            h = h + 0.2 * (self.cell(x, h) - h)
            steps += 1
        return self.fc(h)


def seeded(make, *shape):
    torch.manual_seed(0)
    x = torch.randn(*shape)
    return make(), x


SIX = {
    "seed": lambda: seeded(lambda: StockPredictor(3, 10, 1, 1), 10, 5, 3),
    "gru": lambda: seeded(lambda: StockPredictor(3, 10, 4, 1, rnn=nn.GRU), 10, 200, 3),
    "transformer": lambda: seeded(TransformerRegressor, 2, 12, 16),
    "resnet": lambda: seeded(ResidualCNN, 2, 3, 16, 16),
    "lstm_loop": lambda: seeded(lambda: StockPredictor(3, 10, 1, 1, rnn=recurrent_layer("lstm_loop")),
                                10, 20, 3),
    "while_loop": lambda: seeded(UntilNorm, 10, 3),
}
"""

SHOW = """\
model, x = SIX[{name!r}]()
widget = stockdemo.show(model, x, view="unrolled")
display(widget)
print(json.dumps({{"name": {name!r}, "model_id": widget.model_id, "ops": ops_by_type(model(x)),
                  "parameters": len(list(model.parameters()))}}))
"""

SIX = ("seed", "gru", "transformer", "resnet", "lstm_loop", "while_loop")
GENERAL = ("transformer", "resnet", "while_loop")  # not a StockPredictor: the cell's own lines


@pytest.fixture(scope="module")
def executed():
    """The notebook, run top to bottom in a fresh ipykernel -> (each model's printed facts,
    each widget's synced state by model id)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP), nbformat.v4.new_code_cell(MODELS)]
    nb.cells += [nbformat.v4.new_code_cell(SHOW.format(name=name)) for name in SIX]
    NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    facts = {}
    for cell in nb.cells[2:]:
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        fact = json.loads(text.strip().splitlines()[-1])
        facts[fact["name"]] = fact
    states = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return facts, {model_id: s["state"] for model_id, s in states.items()}


def payload_of(executed, name: str) -> dict:
    facts, states = executed
    return json.loads(states[facts[name]["model_id"]]["payload"])


@pytest.mark.parametrize("name", SIX)
def test_the_widgets_state_holds_the_ops_autograds_own_walk_counts(executed, name):
    facts, _ = executed
    payload = payload_of(executed, name)
    kinds = [payload["kinds"][k] for k in payload["nodes"]["kind"]]
    drawn = Counter(op for op, kind in zip(node_text(payload, "op"), kinds, strict=True) if kind == "op")
    walked = Counter(facts[name]["ops"])
    assert kinds.count("parameter") == walked.pop("AccumulateGrad") == facts[name]["parameters"]
    assert drawn == walked
    assert payload["counts"]["operations"] == sum(walked.values())


@pytest.mark.parametrize("name", GENERAL)
def test_a_model_defined_in_a_cell_names_the_cells_lines(executed, name):
    trace = payload_of(executed, name)["trace"]
    assert {line["file"] for line in trace["lines"]} == {"Cell In[2]"}  # the cell of the models
    assert all(i >= 0 for i in trace["forward_line"])  # every op on a line of that cell


def test_a_stockpredictor_is_drawn_on_the_playgrounds_steps_and_layers(executed):
    payload = payload_of(executed, "gru")
    assert max(s for s in payload["nodes"]["step"] if s is not None) == 199
    assert max(v for v in payload["nodes"]["layer"] if v is not None) == 3
    assert {line["file"] for line in payload["trace"]["lines"]} == {"stockdemo/model.py"}
