"""Every knob of a run, declared once: default, bounds, step, and how to read it.

Sliders, URL query parameters, the command line and validation all read the
declarations here. The defaults are the seed example: batch 10, 5 time steps,
3 features, hidden 10, 1 layer, ``nn.RNN``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

CELLS: tuple[str, ...] = ("rnn", "gru", "lstm", "rnn_loop", "gru_loop", "lstm_loop")
CELL_LABELS: dict[str, str] = {
    "rnn": "nn.RNN",
    "gru": "nn.GRU",
    "lstm": "nn.LSTM (fused on CPU)",
    "rnn_loop": "for-loop over nn.RNNCell",
    "gru_loop": "for-loop over nn.GRUCell",
    "lstm_loop": "for-loop over nn.LSTMCell",
}

VIEWS: tuple[str, ...] = ("auto", "rolled", "unrolled")
VIEW_LABELS: dict[str, str] = {
    "auto": "auto (unrolled while it stays readable)",
    "rolled": "rolled (one block per layer, × T)",
    "unrolled": "unrolled (every node)",
}

# Longest text accepted for one query value; longer values are not even parsed.
_MAX_RAW_LEN = 64


@dataclass(frozen=True)
class IntKnob:
    """An integer control with inclusive bounds."""

    name: str
    label: str
    default: int
    low: int
    high: int
    step: int
    help: str

    def parse(self, raw: object) -> tuple[int, str | None]:
        """Untrusted value -> (valid value, message or None). Never raises."""
        text = _last(raw)
        if text is None:
            return self.default, None
        text = text.strip()
        if len(text) > _MAX_RAW_LEN:
            return self.default, (
                f"{self.label}: the value is too long to be a number; "
                f"using the default {self.default}."
            )
        try:
            number = float(text)
        except ValueError:
            return self.default, (
                f"{self.label}: {_show(text)} is not a number; using the default {self.default}."
            )
        if number != number or number in (float("inf"), float("-inf")):
            return self.default, (
                f"{self.label}: {_show(text)} is not a finite number; "
                f"using the default {self.default}."
            )
        value = round(number)
        message = None
        if value != number:
            message = f"{self.label}: {_show(text)} is not a whole number; rounded to {value}."
        if value < self.low or value > self.high:
            clamped = min(max(value, self.low), self.high)
            message = (
                f"{self.label}: {_show(text)} is outside {self.low}–{self.high}; "
                f"using {clamped}."
            )
            value = clamped
        return int(value), message


@dataclass(frozen=True)
class ChoiceKnob:
    """A control that takes one of a fixed set of strings."""

    name: str
    label: str
    default: str
    choices: tuple[str, ...]
    help: str

    def parse(self, raw: object) -> tuple[str, str | None]:
        """Untrusted value -> (valid choice, message or None). Never raises."""
        text = _last(raw)
        if text is None:
            return self.default, None
        value = text.strip().lower()
        if value in self.choices:
            return value, None
        return self.default, (
            f"{self.label}: {_show(text[:_MAX_RAW_LEN])} is not one of "
            f"{', '.join(self.choices)}; using {self.default}."
        )


Knob = IntKnob | ChoiceKnob

SEQ_LEN = IntKnob("seq_len", "Sequence length T", 5, 1, 200, 1,
                  "Time steps per input window. Each extra step adds one block per layer.")
HIDDEN_SIZE = IntKnob("hidden_size", "Hidden size", 10, 1, 256, 1,
                      "Units in the hidden state. Changes tensor shapes, not the graph's shape.")
NUM_LAYERS = IntKnob("num_layers", "Layers", 1, 1, 4, 1,
                     "Stacked recurrent layers. Each layer adds one row of blocks.")
BATCH_SIZE = IntKnob("batch_size", "Batch size", 10, 1, 64, 1,
                     "Sequences run side by side. One prediction each.")
INPUT_SIZE = IntKnob("input_size", "Features", 3, 1, 16, 1,
                     "Numbers per time step (for stocks: open, close, volume...).")
CELL = ChoiceKnob("cell", "Cell", "rnn", CELLS,
                  "Which recurrent cell runs the sequence: a built-in nn module, "
                  "or an explicit Python for-loop over the matching cell.")
SEED = IntKnob("seed", "Seed", 0, 0, 2**31 - 1, 1,
               "torch.manual_seed before drawing the input and building the model.")
VIEW = ChoiceKnob("view", "Graph view", "auto", VIEWS,
                  "Unrolled draws every node; rolled draws one block per layer with its count.")

# The knobs of a RunConfig, in the order the controls appear.
RUN_KNOBS: tuple[Knob, ...] = (
    SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, BATCH_SIZE, INPUT_SIZE, CELL, SEED,
)
KNOBS: dict[str, Knob] = {k.name: k for k in (*RUN_KNOBS, VIEW)}


@dataclass(frozen=True)
class RunConfig:
    """One run of the stock predictor: the seed example by default."""

    seq_len: int = SEQ_LEN.default
    hidden_size: int = HIDDEN_SIZE.default
    num_layers: int = NUM_LAYERS.default
    batch_size: int = BATCH_SIZE.default
    input_size: int = INPUT_SIZE.default
    cell: str = CELL.default
    seed: int = SEED.default

    def __post_init__(self) -> None:
        for knob in RUN_KNOBS:
            value = getattr(self, knob.name)
            if isinstance(knob, IntKnob):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError(f"{knob.name} must be an int, got {value!r}")
                if not knob.low <= value <= knob.high:
                    raise ValueError(
                        f"{knob.name}={value} is outside {knob.low}..{knob.high}"
                    )
            elif value not in knob.choices:
                raise ValueError(f"{knob.name}={value!r} is not one of {knob.choices}")

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> tuple[RunConfig, list[str]]:
        """Untrusted strings (URL query values) -> (valid config, messages).

        Missing keys take their default silently; anything rejected or clamped
        gets one plain-language message. Unknown keys are ignored here (other
        pages own them). Never raises on bad text.
        """
        values: dict[str, object] = {}
        messages: list[str] = []
        for knob in RUN_KNOBS:
            raw = params.get(knob.name) if _is_mapping(params) else None
            value, message = knob.parse(raw)
            values[knob.name] = value
            if message:
                messages.append(message)
        return cls(**values), messages

    def to_params(self) -> dict[str, str]:
        """Query parameters that differ from the defaults (for a shareable link)."""
        defaults = RunConfig()
        return {
            f.name: str(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != getattr(defaults, f.name)
        }

    def replace(self, **changes: object) -> RunConfig:
        return dataclasses.replace(self, **changes)

    @property
    def is_loop(self) -> bool:
        return self.cell.endswith("_loop")

    @property
    def base_cell(self) -> str:
        """'rnn', 'gru' or 'lstm', whether built in or looped."""
        return self.cell.removesuffix("_loop")


def _is_mapping(params: object) -> bool:
    return hasattr(params, "get")


def _last(raw: object) -> str | None:
    """A query value may arrive as a string, a list (repeated key) or anything."""
    if raw is None:
        return None
    if isinstance(raw, (list, tuple)):
        return _last(raw[-1]) if raw else None
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "replace")
    return str(raw)


def _show(text: str) -> str:
    shown = text if len(text) <= 24 else text[:21] + "..."
    return repr(shown)


def knob_table(knobs: Iterable[Knob] = RUN_KNOBS) -> list[dict[str, object]]:
    """Rows describing each knob (for docs and the command line's --help)."""
    rows: list[dict[str, object]] = []
    for k in knobs:
        if isinstance(k, IntKnob):
            rows.append({"name": k.name, "default": k.default, "range": f"{k.low}..{k.high}"})
        else:
            rows.append({"name": k.name, "default": k.default, "range": "|".join(k.choices)})
    return rows
