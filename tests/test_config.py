"""The knob registry: every config field, page key and command-line option comes from one declaration."""

import dataclasses

import pytest

from stockdemo import config
from stockdemo.__main__ import main
from stockdemo.config import PAGE_KNOBS, RUN_KNOBS, TRAIN_KNOBS, RunConfig, TrainConfig
from stockdemo.lesson import STEPS
from stockdemo.ui import PAGES


@pytest.mark.parametrize("cls,knobs", [(RunConfig, RUN_KNOBS), (TrainConfig, TRAIN_KNOBS)])
def test_config_fields_are_the_registry_knobs_with_their_defaults(cls, knobs):
    fields = dataclasses.fields(cls)
    assert [f.name for f in fields] == [k.name for k in knobs]
    assert all(getattr(cls(), k.name) == k.default for k in knobs)


def test_out_of_range_values_are_refused_by_both_configs():
    with pytest.raises(ValueError):
        RunConfig(seq_len=config.SEQ_LEN.high + 1)
    with pytest.raises(ValueError):
        TrainConfig(epochs=config.EPOCHS.high + 1)


def test_every_page_of_the_menu_declares_its_url_keys():
    assert {path for path, _, _ in PAGES} <= set(PAGE_KNOBS)
    names = [k.name for knobs in PAGE_KNOBS.values() for k in knobs]
    assert {"node", "panel", "step"} <= set(names)


def test_lesson_links_carry_every_setting_the_linked_page_binds():
    for step in STEPS:
        bound = {k.name for k in PAGE_KNOBS[step.page]}
        fields = {f.name for f in dataclasses.fields(step.settings)}
        assert set(step.query) == bound & fields


def test_the_command_line_offers_every_run_knob(capsys):
    with pytest.raises(SystemExit):
        main(["graph", "--help"])
    text = capsys.readouterr().out
    assert all(f"--{k.name.replace('_', '-')}" in text for k in RUN_KNOBS)
