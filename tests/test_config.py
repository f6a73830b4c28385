"""The knob registry: every config field, page key and command-line option comes from one declaration."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
        # A setting held in another form (the Your code step's source, as its compressed link).
        fields |= {k.name for k in step.settings.KNOBS
                   if isinstance(getattr(type(step.settings), k.name, None), property)}
        assert set(step.query) == bound & fields


def test_the_command_line_offers_every_run_knob(capsys):
    with pytest.raises(SystemExit):
        main(["graph", "--help"])
    text = capsys.readouterr().out
    assert all(f"--{k.name.replace('_', '-')}" in text for k in RUN_KNOBS)


@given(st.one_of(st.none(), st.text(max_size=300), st.lists(st.text(max_size=50), max_size=3)))
def test_the_compare_link_never_raises_and_gives_a_valid_run(raw):
    from stockdemo.config import parse_compare

    config, messages = parse_compare(raw)
    assert config is None or isinstance(config, RunConfig)
    assert all(isinstance(m, str) and m for m in messages)


@pytest.mark.parametrize("config", [RunConfig(), RunConfig(seq_len=6), RunConfig(cell="lstm_loop", seed=7,
                                                                                  num_layers=3)])
def test_a_pinned_run_goes_into_the_link_and_comes_back_the_same(config):
    from stockdemo.config import compare_text, parse_compare

    text = compare_text(config)
    assert text == "defaults" or all(part.count(".") == 1 for part in text.split("~"))
    assert parse_compare(text) == (config, [])
    assert parse_compare("seq_len.999~nonsense")[1]  # clamped and left out, each said



@given(st.one_of(st.none(), st.text(max_size=200)))
def test_the_operators_countdowns_never_raise_and_are_valid_countdowns_with_no_limit_first(raw):
    choices = config.COUNTDOWN.parse_list(raw, config.COUNTDOWN_CHOICES)
    assert choices[0] == 0 and list(choices) == sorted(set(choices))
    assert all(config.COUNTDOWN.parse(str(s)) == (s, None) for s in choices)


@pytest.mark.parametrize("raw,choices", [
    ("5,15,30", (0, 5, 15, 30)),
    (" 30 , 5,,0", (0, 5, 30)),
    ("", config.COUNTDOWN_CHOICES),
    ("5,soon", config.COUNTDOWN_CHOICES),  # one bad entry: the product's list, not a part of theirs
    ("5,601", config.COUNTDOWN_CHOICES),
    (",".join(["5"] * 9), config.COUNTDOWN_CHOICES),  # more than a row of buttons
])
def test_the_operators_countdowns_replace_the_products_only_when_every_one_is_valid(raw, choices):
    assert config.COUNTDOWN.parse_list(raw, config.COUNTDOWN_CHOICES) == choices


def test_the_countdowns_come_from_the_environment_when_it_names_them(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_COUNTDOWN_CHOICES", "5")
    assert config.countdown_choices() == (0, 5)
    monkeypatch.delenv("STOCKDEMO_COUNTDOWN_CHOICES")
    assert config.countdown_choices() == config.COUNTDOWN_CHOICES
