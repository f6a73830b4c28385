"""Command line: draw a run's autograd graph for slides, without a browser, or replay it.

    python -m stockdemo graph --seq-len 8 --num-layers 2 --cell gru --format dot
    python -m stockdemo graph --seq-len 8 --format html -o run.html   # a graph to hand out
    python -m stockdemo trace --seq-len 8 --cell gru
    python -m stockdemo code my_model.py --format json   # run a script in the sandbox
"""

from __future__ import annotations

import argparse
import json
import sys

from stockdemo.code.view import drawing_of_record, drawing_of_run
from stockdemo.config import RUN_KNOBS, VIEW, RunConfig
from stockdemo.graph import count_text
from stockdemo.live.run import recorded, run
from stockdemo.render.dot import render_dot
from stockdemo.render.poster import svg_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stockdemo",
                                     description="Draw the autograd graph of one live run.")
    sub = parser.add_subparsers(dest="command", required=True)
    graph = sub.add_parser("graph", help="write the graph of one run as DOT, JSON, SVG, or HTML "
                                         "(the interactive view with its replay, one file)")
    for knob in (*RUN_KNOBS, VIEW):
        _add_knob(graph, knob)
    graph.add_argument("--format", choices=("dot", "json", "svg", "html"), default="dot")
    graph.add_argument("-o", "--output", help="file to write (default: standard output)")
    trace = sub.add_parser("trace", help="replay one run as JSON: the order autograd created the "
                                         "nodes in, and the order backward() of output.sum() ran them")
    for knob in RUN_KNOBS:
        _add_knob(trace, knob)
    trace.add_argument("-o", "--output", help="file to write (default: standard output)")
    code = sub.add_parser("code", help="run a script in the sandbox, as the Your code page does, and "
                                       "report the graph of the tensor it names `predictions`: JSON "
                                       "(counts, printed text, shape, error, limits), DOT or HTML. "
                                       "Exit 0 when it ran, 1 when it failed or a limit stopped it")
    code.add_argument("file", nargs="+",
                      help="the script (what the editor holds); several: one JSON line each, in order")
    code.add_argument("--format", choices=("json", "dot", "html"), default="json")
    code.add_argument("-o", "--output", help="file to write (default: standard output)")
    args = parser.parse_args(argv)
    if args.command == "trace":
        return _trace(args)
    if args.command == "code":
        return _code(args)

    given = {k: v for k, v in vars(args).items() if v is not None}
    config, messages = RunConfig.from_params(given)
    view, view_message = VIEW.parse(given.get("view"))
    for message in [*messages, view_message]:
        if message:
            print(f"note: {message}", file=sys.stderr)

    graph = run(config).graph
    if args.format == "json":
        text = json.dumps(graph.to_dict(), indent=1)
    elif args.format == "html":
        text = _handout(config, view)
    elif args.format == "svg":  # drawn as the view draws it, every node placed: no Graphviz needed
        text = svg_file(drawing_of_record(recorded(config), view, replay=False)[0])
    else:
        text = render_dot(graph, view).dot
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        counts = graph.counts
        print(f"wrote {args.output}: {counts.summary()}; {counts.edges:,} edges", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _add_knob(parser: argparse.ArgumentParser, knob) -> None:
    parser.add_argument(f"--{knob.name.replace('_', '-')}", dest=knob.name,
                        metavar=knob.name.upper(), help=f"{knob.help} ({knob.bounds()})")


def _handout(config: RunConfig, view: str) -> str:
    """The run's graph, every node placed, with its replay: one self-contained HTML file."""
    from stockdemo.render.handout import run_handout

    return run_handout(config, *drawing_of_run(config, view))


def _trace(args: argparse.Namespace) -> int:
    given = {k: v for k, v in vars(args).items() if v is not None}
    config, messages = RunConfig.from_params(given)
    for message in messages:
        print(f"note: {message}", file=sys.stderr)
    trace = drawing_of_run(config)[1]
    text = json.dumps(trace.to_dict(), indent=1) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.output}: {count_text(len(trace.forward), 'op')} in the order forward "
              f"recorded them, {len(trace.backward):,} in the order backward() ran them",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _code(args: argparse.Namespace) -> int:
    from stockdemo.code.drawing import graph_dot, graph_html
    from stockdemo.sandbox import run_code

    if len(args.file) > 1 and (args.format != "json" or args.output):
        print("error: several files give JSON lines on standard output: drop --format and -o",
              file=sys.stderr)
        return 2
    sources = {}
    for name in args.file:
        try:
            with open(name, encoding="utf-8") as f:
                sources[name] = f.read()
        except (OSError, UnicodeDecodeError) as err:
            print(f"error: cannot read {name}: {err}", file=sys.stderr)
            return 2
    if len(sources) < len(args.file):
        print("error: a file is named twice", file=sys.stderr)
        return 2
    if len(args.file) > 1:
        failed = 0
        for name, source in sources.items():  # each in its own sandboxed run, one after another
            run = run_code(source)
            print(json.dumps({"file": name, **run.to_dict()}), flush=True)
            if not run.ok:
                failed += 1
                print(f"{name}: {run.status}: {run.message}", file=sys.stderr)
        return 1 if failed else 0
    [(name, source)] = sources.items()
    run = run_code(source)
    if args.format == "json":
        text = json.dumps(run.to_dict(), indent=1) + "\n"
    elif run.graph is None:
        print(f"error: no graph to draw. {run.message}", file=sys.stderr)
        return 1
    elif args.format == "dot":
        text = graph_dot(run.graph)
    else:
        facts = [("Output shape", str(tuple(run.shape or ()))), ("Run", f"{run.seconds * 1000:.0f} ms")]
        text = graph_html(run.graph, source, facts)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.output}: {run.status}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if not run.ok:
        print(f"{run.status}: {run.message}", file=sys.stderr)
    return 0 if run.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
