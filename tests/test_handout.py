"""stockdemo.render.handout: one self-contained HTML file per graph, and the CLI's --format html."""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser

from stockdemo import RunConfig, run
from stockdemo.__main__ import main as cli
from stockdemo.code.view import drawing_of_run
from stockdemo.i18n import speaking
from stockdemo.layout.steps import layout
from stockdemo.render.handout import POLICY, handout_html, run_handout, view_file_name, view_handout
from stockdemo.render.node_table import node_table
from stockdemo.render.payload import view_payload


class Parts(HTMLParser):
    """What a browser would load: every element's external references, scripts' texts, table rows."""

    def __init__(self) -> None:
        super().__init__()
        self.references: list[tuple[str, str, str]] = []
        self.scripts: list[tuple[dict, str]] = []
        self.rows = 0
        self._script: dict | None = None
        self.meta: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("src", "href", "action", "data", "poster", "srcset"):
            if name in a:
                self.references.append((tag, name, a[name]))
        if tag == "link":
            self.references.append((tag, "rel", a.get("rel", "")))
        if tag == "script":
            self._script = a
            self.scripts.append((a, ""))
        if tag == "meta":
            self.meta.append(a)
        if tag == "tr" and self._in_body_rows:
            self.rows += 1
        if tag == "tbody":
            self._in_body_rows = True

    _in_body_rows = False

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None
        if tag == "tbody":
            self._in_body_rows = False

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)


def parts(text: str) -> Parts:
    p = Parts()
    p.feed(text)
    return p


def test_the_file_loads_nothing_from_outside_and_forbids_every_request():
    config = RunConfig()
    picture = layout(run(config).graph, "auto", max_nodes=None)
    p = parts(run_handout(config, picture, drawing_of_run(config)[1]))
    assert p.references == []
    [policy] = [m["content"] for m in p.meta if m.get("http-equiv") == "Content-Security-Policy"]
    assert policy == POLICY and "default-src 'none'" in policy and "connect-src" not in policy
    assert all("src" not in attrs for attrs, _ in p.scripts)  # every script inline


def test_the_inlined_data_is_the_apps_payload_with_its_replay():
    config = RunConfig(seq_len=7, cell="gru")
    picture = layout(run(config).graph, "auto", max_nodes=None)
    trace = drawing_of_run(config)[1]
    p = parts(run_handout(config, picture, trace))
    [data] = [text for attrs, text in p.scripts if attrs.get("id") == "stockdemo-data"]
    payload = json.loads(data)
    expected = view_payload(picture, trace, height=payload["box_height"])
    assert payload == expected
    assert len(payload["trace"]["forward"]) == len(trace.forward)
    assert payload["stage"] is None and payload["compare"] is None  # no live controls without a server


def test_the_table_has_one_row_per_drawn_node():
    config = RunConfig(num_layers=2)
    picture = layout(run(config).graph, "auto", max_nodes=None)
    trace = drawing_of_run(config)[1]
    text = run_handout(config, picture, trace)
    assert parts(text).rows == len(node_table(picture, trace)) == len(picture.nodes)


def test_text_from_the_run_cannot_break_out_of_its_element():
    """A label or caption holding HTML or '</script>' stays text: escaped in the page, inert in the data."""
    config = RunConfig()
    picture = layout(run(config).graph, "auto", max_nodes=None)
    hostile = "</script><script>alert(1)</script><!--"
    evil = dataclasses.replace(picture, caption=hostile)
    text = handout_html(evil, None, title=hostile, about=hostile, facts=[(hostile, hostile)],
                        code=hostile)
    p = parts(text)
    # Still exactly the scripts the file ships, and the data parses back to the caption.
    assert [attrs.get("id") for attrs, _ in p.scripts] == ["stockdemo-data", "stockdemo-view", None]
    [data] = [t for attrs, t in p.scripts if attrs.get("id") == "stockdemo-data"]
    assert json.loads(data)["caption"] == hostile
    assert "<script>alert(1)" not in text


def test_the_view_script_is_safe_to_inline():
    p = parts(view_handout(layout(run(RunConfig()).graph, "auto", max_nodes=None)))
    [script] = [t for attrs, t in p.scripts if attrs.get("id") == "stockdemo-view"]
    assert len(script) > 10_000  # the whole view, bundled
    assert not re.search(r"</script", script, re.IGNORECASE)


def test_a_view_without_a_run_has_no_replay_and_says_so():
    picture = layout(run(RunConfig()).graph, "rolled", max_nodes=None)
    text = view_handout(picture)
    payload = json.loads(next(t for a, t in parts(text).scripts if a.get("id") == "stockdemo-data"))
    assert payload["trace"] is None
    assert "has no replay" in text
    assert view_file_name(None, "lab_graph_view_0") == "stockdemo-graph-lab-graph-view-0.html"


def test_a_view_of_a_run_without_its_replay_gets_one():
    from stockdemo.ui.graph_view import handout_of

    config = RunConfig(seq_len=4)
    picture = layout(run(config).graph, "auto", max_nodes=None)
    payload = json.loads(next(t for a, t in parts(handout_of(picture, None, config)).scripts
                              if a.get("id") == "stockdemo-data"))
    assert payload["trace"]["backward"]
    assert view_file_name(config, "graph_view") == "stockdemo-graph-rnn-T4-L1.html"


def test_a_handout_made_in_spanish_stays_spanish_its_view_and_html_lang_too():
    config = RunConfig(num_layers=2)
    picture = layout(run(config).graph, "auto", max_nodes=None)
    with speaking("es"):
        text = run_handout(config, picture, drawing_of_run(config)[1])
    payload = json.loads(next(t for a, t in parts(text).scripts if a.get("id") == "stockdemo-data"))
    assert '<html lang="es">' in text and payload["words"]["lang"] == "es"
    assert "Grafo de autograd: nn.RNN, T = 5, 2 capas" in text and "El grafo como tabla" in text
    assert payload["trace"]["status"]["forward"].startswith("Grabar (hacia adelante): {done} de ")
    english = run_handout(config, picture, drawing_of_run(config)[1])
    assert '<html lang="en">' in english and "Autograd graph: nn.RNN, T = 5, 2 layers" in english


def test_the_command_line_writes_the_handout(tmp_path, capsys):
    out = tmp_path / "run.html"
    assert cli(["graph", "--seq-len", "8", "--cell", "lstm_loop", "--format", "html", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>")
    assert "nn.LSTMCell" in text or "LSTMCell" in text  # the run's own settings and code
    payload = json.loads(next(t for a, t in parts(text).scripts if a.get("id") == "stockdemo-data"))
    assert payload["nodes"]["id"] == [p.id for p in layout(run(RunConfig(seq_len=8, cell="lstm_loop"))
                                                           .graph, "auto", max_nodes=None).nodes]
    assert "wrote" in capsys.readouterr().err
