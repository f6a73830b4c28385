"""Every knob, declared once: name (also its URL key), label, default, bounds, help.

In the spirit of TensorFlow Playground's ``state.ts``: the config dataclasses'
fields, URL parsing and validation, links, presets, the lesson's links, the
command line and each page's URL keys are all derived from the declarations
here. The defaults are the seed example: batch 10, 5 time steps, 3 features,
hidden 10, 1 layer, ``nn.RNN``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from stockdemo.cells import BUILT_IN, CELL_LABELS, CELLS, LOOP, is_loop
from stockdemo.i18n import ENGLISH, LANGUAGES, N_, NAMES, tr
from stockdemo.knobs import (
    ChoiceKnob,
    IntKnob,
    Knob,
    KnobConfig,
    TextKnob,
    knob_fields,
    parse_knobs,
    query_text,
    quoted,
)

VIEWS: tuple[str, ...] = ("auto", "rolled", "unrolled")
VIEW_LABELS: dict[str, str] = {
    "auto": N_("auto (unrolled while it stays readable)"),
    "rolled": N_("rolled (one block per layer, × T)"),
    "unrolled": N_("unrolled (every node)"),
}


SEQ_LEN = IntKnob("seq_len", N_("Sequence length T"), 5, 1, 200, 1,
                  N_("Time steps per input window. Each extra step adds one block per layer."))
HIDDEN_SIZE = IntKnob("hidden_size", N_("Hidden size"), 10, 1, 256, 1,
                      N_("Units in the hidden state. Changes tensor shapes, not the graph's shape."))
NUM_LAYERS = IntKnob("num_layers", N_("Layers"), 1, 1, 4, 1,
                     N_("Stacked recurrent layers. Each layer adds one row of blocks."))
BATCH_SIZE = IntKnob("batch_size", N_("Batch size"), 10, 1, 64, 1,
                     N_("Sequences run side by side. One prediction each."))
INPUT_SIZE = IntKnob("input_size", N_("Features"), 3, 1, 16, 1,
                     N_("Numbers per time step (for stocks: open, close, volume...)."))
CELL = ChoiceKnob("cell", N_("Cell"), "rnn", CELLS,
                  N_("Which recurrent cell runs the sequence: a built-in nn module, "
                  "or an explicit Python for-loop over the matching cell."), labels=CELL_LABELS)
SEED = IntKnob("seed", N_("Seed"), 0, 0, 2**31 - 1, 1,
               N_("torch.manual_seed before drawing the input and building the model."))
VIEW = ChoiceKnob("view", N_("Graph view"), "auto", VIEWS,
                  N_("Unrolled draws every node; rolled draws one block per layer with its count."),
                  labels=VIEW_LABELS)
# The Playground's open tab, by the tab's title (Streamlit binds tabs by their text).
PANEL_LABELS: dict[str, str] = {
    "predictions": N_("Predictions"), "ops": N_("Ops by type"), "size": N_("Graph size against T"),
    "code": N_("Share this run"),
}
PANEL = ChoiceKnob("panel", N_("Panel"), "predictions", tuple(PANEL_LABELS),
                   N_("The Playground's open tab."), labels=PANEL_LABELS)

PRESENT = ChoiceKnob("present", N_("Presenter mode"), "0", ("0", "1"),
                    N_("Large type and collapsed controls, for a projector."))

# The reader's language, on every page: a link's ?lang=, else the browser's, else English
# (stockdemo/ui/language.py). Any tag a browser sends is read (zh-CN, zh-Hans, es-419, en-GB).
LANG = ChoiceKnob("lang", N_("Language"), ENGLISH, LANGUAGES,
                  N_("The language of the app's words. Code, op names and torch's own messages "
                     "stay as they are."), labels=NAMES)
# The knobs of a RunConfig, in the order the controls appear.
RUN_KNOBS: tuple[Knob, ...] = (
    SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, BATCH_SIZE, INPUT_SIZE, CELL, SEED,
)
KNOBS: dict[str, Knob] = {k.name: k for k in (*RUN_KNOBS, VIEW)}


@knob_fields(RUN_KNOBS)
class RunConfig(KnobConfig):
    """One run of the stock predictor: the seed example by default. Fields: RUN_KNOBS."""

    @property
    def is_loop(self) -> bool:
        return is_loop(self.cell)

    @property
    def base_cell(self) -> str:
        """'rnn', 'gru' or 'lstm', whether built in or looped."""
        return self.cell.removesuffix(LOOP)


# --- Train and predict (pages/train.py) ------------------------------------
# The page also reuses SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL and SEED above.

SOURCES: tuple[str, ...] = ("stocks", "synthetic", "upload")
TICKERS: tuple[str, ...] = ("aapl", "ibm", "msft", "goog", "fb")
SERIES: tuple[str, ...] = ("noise", "walk", "gbm", "sine")
FEATURE_SETS: tuple[str, ...] = ("return", "return+ma", "return+close+ma", "return+close+ma+volume")
TARGETS: tuple[str, ...] = ("return", "price")
LEARNING_RATES: tuple[str, ...] = ("0.0003", "0.001", "0.003", "0.01", "0.03")
TRAIN_LABELS: dict[str, str] = {
    "stocks": N_("Real daily prices (bundled)"),
    "synthetic": N_("Synthetic series (seeded)"),
    "upload": N_("Upload a CSV"),
    **{t: t.upper() for t in TICKERS},
    "noise": N_("Gaussian noise (the seed's torch.randn)"),
    "walk": N_("Random walk"),
    "gbm": N_("Geometric Brownian motion"),
    "sine": N_("Noisy sine"),
    "return+ma": N_("return, MA"),
    "return+close+ma": N_("return, close, MA"),
    "return+close+ma+volume": N_("return, close, MA, volume"),
    "price": N_("next day's close"),
}

SOURCE = ChoiceKnob("source", N_("Data"), "stocks", SOURCES,
                    N_("Real prices shipped with the app, a seeded synthetic series, or your own CSV."),
                    labels=TRAIN_LABELS)
TICKER = ChoiceKnob("ticker", N_("Ticker"), "aapl", TICKERS, N_("Which bundled stock (daily, 2000-2013)."),
                    labels=TRAIN_LABELS)
SYNTH = ChoiceKnob("series", N_("Synthetic series"), "gbm", SERIES,
                   N_("Generated from the seed: noise has no pattern to learn; a sine has one."),
                   labels=TRAIN_LABELS)
# The bundled prices run from 2000 to 2013-03-01.
START_YEAR = IntKnob("start_year", N_("From year"), default=2010, low=2000, high=2013, step=1,
                     help=N_("First calendar year of bundled prices used (real data only)."))
END_YEAR = IntKnob("end_year", N_("To year"), default=2013, low=2000, high=2013, step=1,
                   help=N_("Last calendar year used, inclusive (the data stops on 2013-03-01)."))
FEATURES = ChoiceKnob("features", N_("Input features"), "return+close+ma", FEATURE_SETS,
                      N_("Numbers per day fed to the model; their count is the model's input_size. "
                      "return: log(close / previous close); close: standardised; "
                      "MA: close over its 5-day moving average, minus 1; volume: log(1 + volume)."),
                      labels=TRAIN_LABELS)
TARGET = ChoiceKnob("target", N_("Target"), "return", TARGETS,
                    N_("What the model learns to predict for the next trading day."),
                    labels={**TRAIN_LABELS, "return": N_("next day's return")})
# 100 epochs: a run of a few seconds at the defaults, long enough to watch the training loss
# fall all along while the validation loss rises.
EPOCHS = IntKnob("epochs", N_("Max epochs"), 100, 1, 200, 1,
                 N_("Passes over the training windows; early stopping may end sooner."))
LEARNING_RATE = ChoiceKnob("lr", N_("Learning rate"), "0.01", LEARNING_RATES, N_("Adam's step size."))
PATIENCE = IntKnob("patience", N_("Early-stopping patience"), 0, 0, 50, 1,
                   N_("Stop once the validation loss has not improved for this many epochs; 0: never, "
                   "train every epoch. Either way the model kept is the epoch with the best "
                   "validation loss."))
VAL_PCT = IntKnob("val_pct", N_("Validation %"), 15, 5, 30, 1,
                  N_("Share of the windows, after the training part, that picks the epoch kept "
                  "(and stops training early, if patience is set)."))
TEST_PCT = IntKnob("test_pct", N_("Test %"), 15, 5, 40, 1,
                   N_("Share of the windows at the end, held out until the metrics."))

TRAIN_KNOBS: tuple[Knob, ...] = (
    SOURCE, TICKER, SYNTH, START_YEAR, END_YEAR, FEATURES, TARGET,
    SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL, EPOCHS, LEARNING_RATE, PATIENCE, VAL_PCT, TEST_PCT, SEED,
)
TRAIN_BATCH_SIZE = 32  # fixed: keeps an epoch short enough for live progress
MAX_TRAIN_SECONDS = 20.0  # wall-time cap on one training run, for a shared host


@knob_fields(TRAIN_KNOBS)
class TrainConfig(KnobConfig):
    """One training run on the Train and predict page. Defaults train in a few seconds.

    Fields: TRAIN_KNOBS.
    """

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> tuple[TrainConfig, list[str]]:
        """Untrusted strings (URL query values) -> (valid config, messages). Never raises."""
        values, messages = parse_knobs(TRAIN_KNOBS, params)
        config, notes = cls.checked(**values)
        return config, messages + notes

    @classmethod
    def checked(cls, **values: object) -> tuple[TrainConfig, list[str]]:
        """Valid values for each knob -> (config, notes): a year range given backwards is turned round."""
        start, end = values.get("start_year", START_YEAR.default), values.get("end_year", END_YEAR.default)
        if start > end:
            values.update(start_year=end, end_year=start)
            return cls(**values), [tr("*{start}* was after *{end}*: the two were swapped.",
                                      start=tr(START_YEAR.label), end=tr(END_YEAR.label))]
        return cls(**values), []

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(self.features.split("+"))

    @property
    def learning_rate(self) -> float:
        return float(self.lr)

    @property
    def model_config(self) -> RunConfig:
        """The model's shape as a RunConfig: input_size is the number of features."""
        return RunConfig(seq_len=self.seq_len, hidden_size=self.hidden_size,
                         num_layers=self.num_layers, batch_size=TRAIN_BATCH_SIZE,
                         input_size=len(self.feature_names), cell=self.cell, seed=self.seed)


# Debugging page: what to inspect inside a run (not part of RunConfig: the
# run itself is the seed model; these only change what the inspection shows).
WEIGHT_SCALE = IntKnob("weight_scale", N_("Recurrent weight scale (%)"), 100, 25, 300, 25,
                       N_("Multiplies every recurrent weight matrix (weight_hh) of the run. "
                       "Above 100 % with ReLU, gradients grow back through time (explode)."))
NONLINEARITY = ChoiceKnob("nonlinearity", N_("RNN nonlinearity"), "tanh", ("tanh", "relu"),
                          N_("The activation of nn.RNN / nn.RNNCell (GRU and LSTM have their own gates)."))
PRINT_STEP = IntKnob("print_step", N_("Print at time step"), 0, 0, SEQ_LEN.high - 1, 1,
                     N_("The step t at which a hook inside forward prints the hidden state."))
DEBUG_KNOBS: tuple[Knob, ...] = (WEIGHT_SCALE, NONLINEARITY, PRINT_STEP)


# One-click starting points for a class. Values are query strings, exactly what
# a shared link would carry, so they go through the same validation.
@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    page: str
    params: dict[str, str]
    lesson: str


PRESETS: tuple[Preset, ...] = (
    Preset("seed", N_("The seed example"), "pages/playground.py", {},
           N_("Batch 10, 5 steps, 3 features, hidden 10, one nn.RNN layer.")),
    Preset("long", N_("A long sequence"), "pages/playground.py", {"seq_len": "40"},
           N_("40 steps: the graph is 40 blocks long, because the loop ran 40 times.")),
    Preset("lstm", N_("The fused LSTM"), "pages/playground.py", {"cell": "lstm", "seq_len": "40"},
           N_("nn.LSTM on CPU: one fused node per layer, whatever T is.")),
    Preset("deep", N_("A deep stack"), "pages/playground.py", {"num_layers": "4", "seq_len": "8"},
           N_("Four layers: four rows of blocks, each feeding the next.")),
    Preset("exploding", N_("Exploding gradients"), "pages/debugging.py",
           {"nonlinearity": "relu", "weight_scale": "300", "seq_len": "50"},
           N_("ReLU and large recurrent weights: gradients grow back through time.")),
)

# Compare mode (the Playground's stage): a run pinned as A, drawn beside the live run B,
# their nodes matched by id. A link carries A's settings that differ from the defaults as
# one value, compare=seq_len.5~cell.gru ("." and "~" need no escaping in a URL), or
# compare=defaults when A is the seed example itself.
COMPARE = TextKnob("compare", N_("Compare with run A"),
                   N_("The run pinned as A, beside this run (B): its settings, e.g. seq_len.5~cell.gru."),
                   max_len=160)
COMPARE_DEFAULTS = "defaults"


def compare_text(config: RunConfig) -> str:
    """Run A's settings as a link carries them: 'seq_len.5~cell.gru', or 'defaults'."""
    params = config.to_params()
    return "~".join(f"{k}.{v}" for k, v in params.items()) or COMPARE_DEFAULTS


def parse_compare(raw: object) -> tuple[RunConfig | None, list[str]]:
    """Untrusted ``compare`` value -> (run A's config, or None for no comparison; messages).

    Never raises: each setting goes through its own knob's parser; a part that is
    not ``name.value`` for a run setting is named in a message and left out.
    """
    text, _ = COMPARE.parse(raw)
    if not text:
        return None, []
    if text == COMPARE_DEFAULTS:
        return RunConfig(), []
    params: dict[str, str] = {}
    messages: list[str] = []
    names = {k.name for k in RUN_KNOBS}
    for part in text.split("~"):
        name, dot, value = part.partition(".")
        if not dot or name not in names:
            messages.append(tr("{knob}: {value} is not a run setting (they look like seq_len.5); "
                               "left out.", knob=tr(COMPARE.label), value=quoted(part[:40])))
            continue
        params[name] = value
    config, more = RunConfig.from_params(params)
    return config, [tr("{knob}: {message}", knob=tr(COMPARE.label), message=m) for m in more] + messages


# Comparisons worth one click: (key, label, run A's settings, run B's settings).
COMPARE_PRESETS: tuple[tuple[str, str, dict[str, str], dict[str, str]], ...] = (
    ("rnn_gru", N_("nn.RNN against nn.GRU"), {}, {"cell": "gru"}),
    ("t5_t6", N_("T 5 against T 6"), {}, {"seq_len": "6"}),
    ("one_two", N_("One layer against two"), {}, {"num_layers": "2"}),
    ("lstm_loop", N_("nn.LSTM against the loop LSTM"), {"cell": "lstm"}, {"cell": "lstm_loop"}),
)

# Lesson page (pages/lesson.py): which of its steps is on screen, so a link
# such as /lesson?step=3 opens the class at that experiment.
STEP = IntKnob("step", N_("Lesson step"), 1, 1, 20, 1,
               N_("The lesson's experiment on screen; Back and Next move it."))
# A lesson of the teacher's own in the Lesson page's link, compressed (stockdemo/lessons/link.py
# reads it, bounded; stockdemo/lessons/schema.py parses it).
LESSON = TextKnob("lesson", N_("Lesson"), N_("A lesson file, compressed."), max_len=16_000)
# Debugging page: the node the inspector shows, by id; its page checks it against the run.
NODE = TextKnob("node", N_("Node"),
                N_("A node of the run's graph, by id (L0.t4/Tanh0) or as the node picker shows it."))

# The knobs each page binds to its URL, besides PRESENT on every page: its links,
# the lesson's links to it, and which of a link's values its page checks.
PAGE_KNOBS: dict[str, tuple[Knob | TextKnob, ...]] = {
    "app.py": (),
    "pages/playground.py": (*RUN_KNOBS, VIEW, PANEL, COMPARE),
    "pages/train.py": TRAIN_KNOBS,
    "pages/static_vs_dynamic.py": (SEQ_LEN, CELL),
    "pages/debugging.py": (*RUN_KNOBS, *DEBUG_KNOBS, NODE),
    "pages/lesson.py": (STEP, LESSON),
    "pages/author.py": (LESSON,),  # the lesson its editor opens on
    "pages/classroom.py": (),  # its class code is parsed by parse_class_code below
}


# What each select box shows for its values: the menus, and the links (a bound
# select box puts its displayed text in the URL, e.g. ?cell=nn.GRU).
CHOICE_LABELS: dict[str, Mapping[str, str]] = {
    k.name: k.labels for k in (*RUN_KNOBS, VIEW, PANEL, *TRAIN_KNOBS)
    if isinstance(k, ChoiceKnob) and k.labels
}


def url_value(name: str, value: object) -> str:
    """A setting as a link carries it: a select box's displayed text, else the value."""
    return CHOICE_LABELS.get(name, {}).get(str(value), str(value))


# --- Lab page (pages/lab.py, stockdemo/lab/) ----------------------------------
# Each experiment's config (in stockdemo/lab/) is made of these knobs. Names
# carry a lab_ prefix where another page already uses the plain word.

LAB_CELLS: tuple[str, ...] = tuple(BUILT_IN)
LAB_TICKERS: tuple[str, ...] = ("aapl", "ibm", "msft")  # the three with prices in every year
CUTS: tuple[str, ...] = ("weeks", "set")

# Where a Lab control is a run control with other bounds, it is declared as that.
LAB_CELL = CELL.variant("lab_cell", LAB_CELLS, help=N_("The built-in recurrent module the experiment runs."),
                        labels={name: f"nn.{cell.module.__name__}" for name, cell in BUILT_IN.items()})
LAB_TICKER = TICKER.variant("lab_ticker", LAB_TICKERS,
                            help=N_("Whose daily closes fill the windows (bundled prices)."))
LAB_YEAR = IntKnob("lab_year", N_("Year"), 2012, 2001, 2012, 1,
                   N_("The batch holds the first weeks of this year: New Year, Martin Luther King "
                   "and Presidents' Day make some of them four trading days long."))
WEEKS = IntKnob("weeks", N_("Windows in the batch"), 8, 2, 16, 1,
                N_("How many sequences the batch holds."))
CUT = ChoiceKnob("cut", N_("Cut the days"), "weeks", CUTS,
                 N_("At calendar weeks (holidays make short weeks), or into windows of two "
                 "lengths you set, alternating."),
                 {"weeks": N_("at calendar weeks"), "set": N_("two lengths I set")})
SHORT_LEN = IntKnob("short_len", N_("Short window (days)"), 3, 1, 30, 1,
                    N_("Length of every second window when you set the lengths."))
LONG_LEN = IntKnob("long_len", N_("Long window (days)"), 5, 1, 30, 1,
                   N_("Length of the other windows when you set the lengths."))
LAB_T = SEQ_LEN.variant("lab_t", label=N_("Days per window T"), high=30,
                        help=N_("Trading days in each input window: one recorded block per day."))
BATCHES = IntKnob("batches", N_("Batches in a row"), 6, 2, 12, 1,
                  N_("Batches of consecutive days read one after another, the hidden state "
                  "carried from each to the next."))
LAB_BATCH = BATCH_SIZE.variant("lab_batch", label=N_("Windows per batch"), default=32, high=128,
                               help=N_("Sequences run side by side in one forward pass."))
LAB_HIDDEN = HIDDEN_SIZE.variant(
    "lab_hidden", high=64,
    help=N_("Units in the hidden state: saved tensors grow with it, the node count does not."))
# Upper bounds keep the slowest corner (GRU, 12 batches of 30 days carried; the
# sweep at batch 128, hidden 64, T 100) to a few seconds on a shared 2-core box.
MAX_T = IntKnob("max_t", N_("Longest T measured"), 50, 5, 100, 5,
                N_("The sweep runs T = 1, 2, 5, 10, 20, ... up to this length, for every cell."))

# Every control of the Lab, once. The open experiment is a tab, bound by its title.
LAB_KNOBS: tuple[Knob, ...] = (LAB_TICKER, LAB_YEAR, WEEKS, CUT, SHORT_LEN, LONG_LEN, LAB_CELL,
                               LAB_T, BATCHES, LAB_BATCH, LAB_HIDDEN, MAX_T, SEED)
# Which of the open experiment's graphs is drawn, by the name its picker shows
# (lab.report.LabGraph.label); its picker checks it against the experiment.
LAB_GRAPH = TextKnob("lab_graph", N_("Show the graph"),
                     N_("Which of the experiment's graphs is drawn; a name it does not have "
                     "draws its first."), max_len=40)
PAGE_KNOBS["pages/lab.py"] = (*LAB_KNOBS, LAB_GRAPH)

# --- Your code (pages/code.py) ---------------------------------------------------
# The code of the last run, compressed (stockdemo/code/link.py reads it, bounded): a link
# reopens the same code and graph, and a class's followers take the teacher's.
# 20,000 characters of Python (the sandbox's bound) compress well under 12,000.
CODE = TextKnob("code", N_("Your code"), N_("The code of the last run, compressed."), max_len=12_000)
PAGE_KNOBS["pages/code.py"] = (CODE,)
# Which graph of a training loop's film the stage draws (0: the first backward()'s): drawn
# in the stage's strip like the Playground's T, bounded by the run's own film (``variant``).
FILM = IntKnob("film", N_("Graph"), 0, 0, 0, 1,
               N_("Each graph is the one autograd recorded up to that backward(), which then freed it; "
                  "the next iteration recorded a new one."))
# The Lab's experiments in page order, by their English titles (stockdemo.lab.EXPERIMENTS's keys).
LAB_EXPERIMENTS: tuple[str, ...] = (
    N_("Different lengths"), N_("Backward twice"), N_("Carried hidden state"), N_("In-place change"),
    N_("NaN"), N_("no_grad"), N_("What the graph costs"))
# The open experiment by its English title (?lab=NaN), whatever language its tab is titled in:
# a link and the class carry it (stockdemo/classroom/state.py); a title in any language is read.
LAB_TAB = ChoiceKnob("lab", N_("Experiment"), LAB_EXPERIMENTS[0], LAB_EXPERIMENTS,
                     N_("The Lab's open experiment, by its title."), {t: t for t in LAB_EXPERIMENTS})
CHOICE_LABELS.update({k.name: k.labels for k in LAB_KNOBS if isinstance(k, ChoiceKnob) and k.labels})


# --- Class mode (stockdemo/classroom/, pages/classroom.py) --------------------
# The join link carries the class code (?class=K7QM3XPA) and, once a student
# has joined, their seat (?seat=...): a random token, nothing personal, kept in
# the URL so a reconnect to another replica is still the same student.
CLASS_KEY = "class"
SEAT_KEY = "seat"
# No look-alikes (0/O, 1/I/L): 31 ** 8 ≈ 8.5e11 codes, read aloud or typed from
# a projector without mistakes, and too many to find by trying (tries are
# rate-limited too).
CLASS_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CLASS_CODE_LEN = 8
# The teacher's countdown for a question, in seconds (0: answers stay open until the reveal).
COUNTDOWN = IntKnob("countdown", N_("Time to answer (s)"), 0, 0, 600, 5,
                    N_("Answers lock when it runs out; Reveal now works at any moment."))
COUNTDOWN_CHOICES: tuple[int, ...] = (0, 15, 30, 60, 90)
_SEAT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def countdown_choices() -> tuple[int, ...]:
    """The teacher's countdowns: the operator's, if valid ($STOCKDEMO_COUNTDOWN_CHOICES="5,15")."""
    return COUNTDOWN.parse_list(os.environ.get("STOCKDEMO_COUNTDOWN_CHOICES"), COUNTDOWN_CHOICES)


def parse_class_code(raw: object) -> tuple[str | None, str | None]:
    """Untrusted class code -> (code or None, message or None). Never raises.

    Case, spaces and dashes are forgiven ("k7qm-3xpa" is K7QM3XPA).
    """
    text = query_text(raw)
    if text is None or not text.strip():
        return None, None
    if len(text) > 4 * CLASS_CODE_LEN:
        return None, tr("That is too long to be a class code.")
    code = "".join(text.split()).replace("-", "").upper()
    if len(code) != CLASS_CODE_LEN or not set(code) <= set(CLASS_ALPHABET):
        return None, tr("A class code is {count} letters and digits, like {example}; {text} is not "
                        "one.", count=CLASS_CODE_LEN, example=show_class_code("K7QM3XPA"), text=quoted(text))
    return code, None


def show_class_code(code: str) -> str:
    """K7QM3XPA -> 'K7QM-3XPA': two halves, easier to read off a projector."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def parse_seat(raw: object) -> str | None:
    """A student's seat token from the URL, or None if it is not one of ours. Never raises."""
    text = query_text(raw)
    if text is None or not 16 <= len(text) <= 64 or not set(text) <= _SEAT_CHARS:
        return None
    return text

