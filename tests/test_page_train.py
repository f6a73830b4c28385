"""The Train and predict page under AppTest: train at the defaults, uploads good and bad, URLs."""

import json
import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from harness.helpers import graph_sent, plotly_values
from harness.uploads import BAD_FILES
from stockdemo.config import EPOCHS, TrainConfig
from stockdemo.render.payload import node_text
from stockdemo.train import prices as data
from stockdemo.train import report
from stockdemo.train import training as train

PAGE = "../pages/train.py"


def page() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=120)


def export_csv(days: int) -> bytes:
    dates = pd.bdate_range("2012-01-02", periods=days)
    rows = [f"{d:%Y-%m-%d},{100 + i % 9},{101 + i % 9},{99 + i % 9},{100.5 + (i * 7) % 11},"
            f"{50 + i % 5},{1000 + i}" for i, d in enumerate(dates)]
    return ("Date,Open,High,Low,Close,Adj Close,Volume\n" + "\n".join(rows)).encode()


def test_training_at_the_defaults_shows_metrics_next_to_both_baselines(clear_caches):
    at = page().run()
    assert not at.exception
    at.button(key="train_go").click().run()
    assert not at.exception
    table = at.dataframe[0].value
    rows = (train.MODEL_ROW, train.PERSISTENCE_ROW, train.MA_ROW)
    assert list(table.index) == [str(train.forecaster_name(row)) for row in rows]
    assert list(table.columns) == ["RMSE (price)", "MAE (price)", "Direction right"]
    verdicts = [w.value for w in at.warning] + [s.value for s in at.success]
    assert any("baseline wins" in v or "model beats both baselines" in v for v in verdicts)
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    names = {t.get("name") for f in figures for t in f["data"]}
    assert {"model forecast", str(train.forecaster_name(train.PERSISTENCE_ROW)),
            str(train.forecaster_name(train.MA_ROW)), "validation loss"} <= names
    labels = " ".join(node_text(graph_sent(at.get("bidi_component")[0]), "label"))
    assert "MseLoss" in labels and "loss (MSE)" in labels
    assert any("Not financial advice" in i.value for i in at.info)
    assert any("next trading day's log return" in m.value for m in at.markdown)
    # what happened, in words, beside the curves: the same run trained again says the same
    config = TrainConfig()
    expected = train.run_training(data.load_dataset(config)[0], config)
    assert any(m.value == report.story(expected) for m in at.markdown)
    loss = next(f for f in figures if any(t.get("name") == "validation loss" for t in f["data"]))
    assert len(plotly_values(loss["data"][1]["y"])) == len(expected.history) == EPOCHS.default


def test_result_stays_after_a_rerun_and_is_dropped_when_settings_change():
    at = page().run()
    at.button(key="train_go").click().run()
    at.run()
    assert len(at.dataframe) == 1
    at.slider(key="seq_len").set_value(6).run()
    assert len(at.dataframe) == 0
    assert any("settings changed" in c.value for c in at.caption)


@pytest.mark.parametrize("case", ["empty", "header only", "binary", "not utf-8", "nan",
                                  "dates out of order", "over the limit"])
def test_a_bad_upload_gets_a_clear_message_and_the_page_keeps_working(case):
    content, message = BAD_FILES[case]
    at = page()
    at.query_params["source"] = "upload"
    at.run()
    at.file_uploader(key="upload_csv").set_value(("prices.csv", content, "text/csv")).run()
    assert not at.exception
    assert len(at.error) == 1
    assert re.search(message, at.error[0].value)
    assert "train_go" not in [b.key for b in at.button]  # no training on a bad file
    at.selectbox(key="source").select("stocks").run()
    assert not at.exception and len(at.error) == 0
    assert at.button(key="train_go")


def test_too_short_an_upload_for_the_sequence_length_is_explained():
    at = page()
    at.query_params["source"] = "upload"
    at.query_params["seq_len"] = "50"
    at.run()
    at.file_uploader(key="upload_csv").set_value(("prices.csv", export_csv(60), "text/csv")).run()
    assert not at.exception
    assert "shorter sequence length" in at.error[0].value


def test_a_typical_export_trains_on_the_close_column():
    at = page()
    at.query_params["source"] = "upload"
    at.run()
    at.file_uploader(key="upload_csv").set_value(("prices.csv", export_csv(200), "text/csv")).run()
    assert not at.exception and len(at.error) == 0
    assert at.selectbox(key="upload_price").value == "Close"
    at.button(key="train_go").click().run()
    assert not at.exception
    assert list(at.dataframe[0].value.index)[0] == str(train.forecaster_name(train.MODEL_ROW))


def test_bad_link_values_are_clamped_and_said():
    at = page()
    at.query_params["seq_len"] = "999"
    at.query_params["lr"] = "5"
    at.query_params["ticker"] = "<script>"
    at.run()
    assert not at.exception
    shown = " ".join(w.value for w in at.warning)
    assert "outside 1–200" in shown and "Learning rate" in shown and "Ticker" in shown
    assert at.slider(key="seq_len").value == 200


def test_a_synthetic_sine_trains_and_names_its_source():
    at = page()
    at.query_params["source"] = "synthetic"
    at.query_params["series"] = "sine"
    at.run()
    assert any("Noisy sine, seed 0" in m.value for m in at.markdown)
    at.button(key="train_go").click().run()
    assert not at.exception
    assert len(at.dataframe[0].value) == 3


def test_a_model_too_big_to_train_live_disables_the_train_button():
    at = page()
    for key, value in {"seq_len": "200", "hidden_size": "256", "num_layers": "4",
                       "cell": "lstm_loop", "start_year": "2000"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    assert "too big to train live" in at.error[0].value
    assert at.button(key="train_go").disabled
