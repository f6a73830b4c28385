"""What saying the Playground's words costs a rerun: Chinese and Spanish against English.

    python bench/i18n_cost.py [--reruns 40]

Two figures, medians and p95 per language:

- the stage's payload as a rerun makes it (``ui.stage.stage_of_run`` and ``view_json``, the
  picture cached, its part kept as ``cached_static_payload`` keeps it), for the default run
  and GRU T 200 L 4: what translation adds is the words said per reader (the picture's holes,
  the figures, the change line), never the layout;
- a whole Playground rerun in AppTest (a move of T between two lengths already run), in each
  language: the page's own words included, with AppTest's overhead around them.

Issue 51's bar: translation adds no more than 1 ms a rerun. Figures depend on the box (a busy
one adds noise larger than the difference): every run prints ``bench/reference.py``'s figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for stockdemo

from bench.reference import reference_ms  # noqa: E402
from stockdemo.config import RunConfig  # noqa: E402
from stockdemo.i18n import speaking  # noqa: E402
from stockdemo.layout.views import picture_of_graph  # noqa: E402
from stockdemo.live.run import run  # noqa: E402
from stockdemo.render.payload import static_payload, view_json  # noqa: E402

LANGS = ("en", "zh_CN", "es")


def summary(times_ms: list[float]) -> str:
    times = sorted(times_ms)
    return f"median {statistics.median(times):.3f} ms, p95 {times[int(0.95 * (len(times) - 1))]:.3f} ms"


def payload_times(config: RunConfig, reruns: int) -> dict[str, list[float]]:
    """view_json of one cached picture and its kept static part, with a stage's change line and
    figures said, in each language (the first call per language fills its words: left out)."""
    from stockdemo.graph.diff import describe_diff, graph_diff
    from stockdemo.ui.metrics import run_figures

    result = run(config)
    picture = picture_of_graph(result.graph, "auto")
    kept = static_payload(picture)
    before = run(RunConfig(**{**config.__dict__, "seq_len": config.seq_len - 1}))
    change = describe_diff(graph_diff(before.graph, result.graph), before.config.__dict__, config.__dict__)
    out: dict[str, list[float]] = {}
    for lang in LANGS:
        with speaking(lang):
            view_json(picture, statics=lambda _: kept)
            times = []
            for _ in range(reruns):
                started = time.perf_counter()
                figures = [(f.label, f.help) for f in run_figures(result, 4, 1.0)]
                view_json(picture, statics=lambda _: kept, stage={"change": str(change), "figures": figures})
                times.append((time.perf_counter() - started) * 1e3)
            out[lang] = times
    return out


def page_times(reruns: int) -> dict[str, list[float]]:
    """A whole Playground rerun in AppTest, T moved between 5 and 6 (both already run); the
    languages take turns, so a busy moment of the box weighs on each alike."""
    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parent.parent
    pages = {}
    for lang in LANGS:
        pages[lang] = AppTest.from_file(str(root / "pages" / "playground.py"), default_timeout=120)
        pages[lang].query_params["lang"] = lang
    out: dict[str, list[float]] = {lang: [] for lang in LANGS}
    for i in range(reruns + 2):
        for lang, at in pages.items():
            with speaking(lang):
                at.session_state["seq_len"] = 5 + i % 2
                started = time.perf_counter()
                at.run()
                if i >= 2:  # both lengths run and laid out once
                    out[lang].append((time.perf_counter() - started) * 1e3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reruns", type=int, default=40)
    args = parser.parse_args()
    print(f"reference: {reference_ms():.1f} ms")
    big = RunConfig(seq_len=200, num_layers=4, cell="gru")
    for name, config in (("default", RunConfig()), ("GRU T200 L4", big)):
        for lang, times in payload_times(config, args.reruns * 5).items():
            print(f"payload {name:<12} {lang:<6} {summary(times)}")
    for lang, times in page_times(args.reruns).items():
        print(f"page rerun           {lang:<6} {summary(times)}")


if __name__ == "__main__":
    main()
