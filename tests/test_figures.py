"""The figures are built without plotly's checks, so hold them to those checks here."""

import json

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from stockdemo import figures
from stockdemo.config import RunConfig
from stockdemo.live.inspection import inspect_run
from stockdemo.live.run import run, size_sweep

CONFIGS = [RunConfig(), RunConfig(seq_len=1, batch_size=1, input_size=3),
           RunConfig(seq_len=200, batch_size=64, cell="lstm", num_layers=4)]


def built(config: RunConfig) -> dict[str, go.Figure]:
    result = run(config)
    ops = pd.DataFrame(list(result.graph.stats["ops_by_type"].items()), columns=["op", "count"])
    return {
        "predictions": figures.predictions_figure(result),
        "ops": figures.ops_figure(ops),
        "size": figures.size_figure(size_sweep(config), config, result.graph.stats["nodes"]),
    }


def as_json(fig: go.Figure | dict) -> dict:
    """A figure as the browser gets it, but for plotly's theme template.

    Our figures send none (Streamlit draws them in its own theme); plotly's
    checker adds its default one.
    """
    spec = json.loads(pio.to_json(fig if isinstance(fig, dict) else fig.to_dict(), validate=False))
    spec["layout"].pop("template", None)
    return spec


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.cell}-T{c.seq_len}-B{c.batch_size}")
def test_every_spec_is_already_in_plotlys_checked_form(config):
    """Plotly's validator, run on each spec, raises nothing and changes nothing."""
    for kind, fig in built(config).items():
        checked = go.Figure(fig.to_dict())  # raises ValueError on any invalid property
        assert as_json(checked) == as_json(fig), kind


def test_predictions_chart_shows_each_window_and_its_star():
    config = RunConfig(batch_size=3, seq_len=7)
    result = run(config)
    spec = as_json(figures.predictions_figure(result))
    lines, stars = spec["data"][:-1], spec["data"][-1]
    assert len(lines) == 3 and [t["x"] for t in lines] == [list(range(7))] * 3
    assert stars["x"] == [7, 7, 7] and stars["marker"]["symbol"] == "star"
    assert spec["layout"]["title"]["text"] == "Input windows and predictions"
    assert spec["layout"]["colorway"] == figures.PALETTE


def test_a_shared_figure_hands_out_one_dict_equal_to_plotlys_own():
    fig = figures.predictions_figure(run(RunConfig()))
    first, again = fig.to_dict(), fig.to_dict()
    # Its words are said for each reader; its arrays are handed out, never copied.
    assert first == again and first["data"][0]["y"] is again["data"][0]["y"]
    assert "template" not in fig.to_dict()["layout"]
    assert as_json(fig) == as_json(go.Figure(fig.to_dict()))  # built and checked by plotly
    assert [t.name for t in fig.data] == [t["name"] for t in fig.to_dict()["data"]]  # read on demand


@pytest.mark.parametrize("layers", [1, 2, 4])
def test_debugging_figures_are_in_checked_form_and_stack_one_panel_per_layer(layers):
    """The heatmap's panels written out are what ``make_subplots(rows=L, shared_xaxes=True)`` lays out."""
    config = RunConfig(seq_len=7, hidden_size=5, num_layers=layers, cell="gru")
    run_ = inspect_run(config)
    for fig in (figures.hidden_heatmap(run_), figures.gradient_figure(run_)):
        assert as_json(go.Figure(fig.to_dict())) == as_json(fig)
    from plotly.subplots import make_subplots
    grid = make_subplots(rows=layers, cols=1, shared_xaxes=True, vertical_spacing=0.1).to_dict()["layout"]
    heat = as_json(figures.hidden_heatmap(run_))
    for name, axis in grid.items():
        if not name.startswith(("xaxis", "yaxis")):
            continue
        for key, value in axis.items():
            assert heat["layout"][name][key] == pytest.approx(value), (name, key)
    assert [t["yaxis"] for t in heat["data"]] == ["y"] + [f"y{n}" for n in range(2, layers + 1)]
    assert heat["data"][0]["z"]["shape"] == "5, 7"  # units by time steps
    line = as_json(figures.gradient_figure(run_))
    assert len(line["data"]) == layers and line["layout"]["yaxis"]["type"] == "log"


def test_train_figures_are_in_checked_form_with_the_best_epoch_marked_as_add_vline_would():
    """The best epoch's line is named in the legend, not by an annotation above the plot,
    which sat on the chart's title when the best epoch came early."""
    from stockdemo.config import TrainConfig
    from stockdemo.train import prices as data
    from stockdemo.train import training as train
    config = TrainConfig(epochs=2, source="synthetic")
    dataset, _ = data.load_dataset(config)
    result = train.run_training(dataset, config)
    loss = figures.loss_figure(result.history)
    for fig in (figures.prices_figure(dataset, "t"), figures.forecast_figure(dataset, result), loss):
        assert as_json(go.Figure(fig.to_dict())) == as_json(fig)
    reference = go.Figure()
    best = result.history[-1].best_epoch
    reference.add_vline(x=best, line_dash="dot", line_color=figures.theme.MUTED,
                        name=f"best validation: epoch {best}", showlegend=True)
    assert loss.layout.shapes == reference.layout.shapes
    assert loss.layout.annotations == ()
    assert "shapes" not in as_json(figures.loss_figure(result.history[:0]))["layout"]


@pytest.mark.parametrize("experiment", ["Different lengths", "Carried hidden state", "no_grad",
                                        "What the graph costs"])
def test_the_labs_charts_are_in_plotlys_checked_form_in_every_language(experiment):
    """The Lab's charts are shared figures too, their words said per reader: checked in each language."""
    from stockdemo import lab
    from stockdemo.i18n import speaking
    from stockdemo.lab.figures import report

    config_class, run_experiment = lab.EXPERIMENTS[experiment]
    for figure, _, _ in report(run_experiment(config_class())).figures:
        for lang in ("en", "zh_CN", "es"):
            with speaking(lang):
                assert as_json(go.Figure(figure.to_dict())) == as_json(figure.to_dict()), lang
