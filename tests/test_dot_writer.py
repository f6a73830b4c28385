"""Our DOT writer gives the graphviz package's text, byte for byte, for every kind of picture."""

import graphviz
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockdemo.config import RunConfig
from stockdemo.layout.steps import layout
from stockdemo.live.run import run
from stockdemo.render.dot import dot_id, dot_statements, render_dot

CASES = [(cell, view, seq_len) for cell in ("rnn", "gru", "lstm", "lstm_loop")
         for view in ("unrolled", "rolled") for seq_len in (1, 6)]


def through_graphviz(statements) -> str:
    """The same statements written by the graphviz package (the reference)."""
    dot = graphviz.Digraph("autograd")
    for kind, target, attrs in statements:
        if kind == "N":
            dot.node(target, **attrs)
        elif kind == "E":
            dot.edge(*target, **attrs)
        else:
            dot.attr(kind, **attrs)
    return dot.source


def reference(graph, rendering) -> str:
    return through_graphviz(dot_statements(layout(graph, rendering.view)))


@pytest.mark.parametrize("cell,view,seq_len", CASES)
def test_dot_matches_the_graphviz_package(cell, view, seq_len):
    graph = run(RunConfig(cell=cell, seq_len=seq_len, num_layers=2)).graph
    rendering = render_dot(graph, view)
    assert rendering.dot == reference(graph, rendering)
    assert rendering.dot.startswith("digraph autograd {\n") and rendering.dot.endswith("}\n")


def test_folded_picture_matches_the_graphviz_package():
    graph = run(RunConfig(seq_len=200, num_layers=4, cell="gru")).graph
    rendering = render_dot(graph, "unrolled")
    assert rendering.folded_steps and rendering.dot == reference(graph, rendering)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_any_identifier_is_quoted_as_the_graphviz_package_quotes_it(text):
    if text.endswith("\\") or "\\" in text:  # ours never hold backslashes; the package warns
        return
    if text.endswith("\n"):
        # The package's ID pattern ends in `$`, which also matches before a final
        # newline, so it leaves "0\n" bare: invalid DOT. Ours quotes it.
        assert dot_id(text).startswith('"')
        return
    if text.startswith("<") and text.endswith(">"):
        # The package leaves "<...>" bare: an HTML-like label, which Graphviz parses as
        # markup ("<lambda>" would be a tag). Ours are always text: quoted.
        assert dot_id(text) == graphviz.quoting.quote(graphviz.nohtml(text))
        return
    assert dot_id(text) == graphviz.quoting.quote(text)
