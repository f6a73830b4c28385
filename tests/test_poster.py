"""stockdemo.render.poster: the picture as a static SVG, in a handout before its script and as a file.

Checked against the Picture it draws (every box, edge and frame, with the view's colours),
parsed as XML, as an SVG viewer would.
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

import pytest

from stockdemo import RunConfig, run, theme
from stockdemo.__main__ import main as cli
from stockdemo.layout.steps import layout
from stockdemo.render.handout import GRAPH_PX, handout_html, view_handout
from stockdemo.render.poster import MAX_BOXES, box_height, fit_scale, poster_html, svg_file, thumbnail_svg

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def seed():
    return layout(run(RunConfig()).graph, "auto", max_nodes=None)


def boxes(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter(f"{SVG}rect") if {"pb", "pm"} & set(r.get("class", "").split())]


def texts(root: ET.Element) -> list[str]:
    return ["\n".join(s.text or "" for s in t.iter(f"{SVG}tspan")) for t in root.iter(f"{SVG}text")
            if t.get("class") != "pc"]


def test_the_file_draws_every_box_edge_and_frame_of_the_picture(seed):
    root = ET.fromstring(svg_file(seed))
    drawn = boxes(root)
    assert len(drawn) == len(seed.nodes)
    for rect, p in zip(drawn, seed.nodes, strict=True):  # in the picture's order, where it put them
        assert float(rect.get("x")) == pytest.approx(p.x - p.w / 2, abs=0.06)
        assert float(rect.get("y")) == pytest.approx(p.y - p.h / 2, abs=0.06)
        assert float(rect.get("width")) == pytest.approx(p.w, abs=0.06)
        assert rect.get("fill") == p.fill
    assert texts(root) == [str(p.label) for p in seed.nodes]
    frames = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "pf"]
    assert len(frames) == len(seed.frames)
    captions = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pc"]
    assert captions == [str(f.label) for f in seed.frames if f.label]
    # One line per edge (a move and a line each), the recurrent ones in their own colour.
    paths = {p.get("class"): p.get("d") for p in root.iter(f"{SVG}path")}
    recurrent = sum(e.recurrent for e in seed.edges)
    assert paths["pe"].count("M") == len(seed.edges) - recurrent
    assert paths["pr"].count("M") == recurrent == 4  # T = 5: four hand-overs of the hidden state
    assert paths["pha"].count("Z") == len(seed.edges) - recurrent
    style = root.find(f"{SVG}style").text
    assert theme.RECURRENT in style and theme.GRAPH_EDGE in style and "var(" not in style
    assert 0 <= float(root.get("width")) - (seed.width + 24) < 1


def test_a_rolled_run_draws_its_dashed_markers(seed):
    rolled = layout(run(RunConfig(cell="gru", seq_len=40, num_layers=2)).graph, "rolled", max_nodes=None)
    root = ET.fromstring(svg_file(rolled))
    markers = [r for r in boxes(root) if "pm" in r.get("class")]
    assert len(markers) == sum(p.kind in ("fold", "loop") for p in rolled.nodes) > 0
    assert all(r.get("fill") is None for r in markers)  # white under the dashes, from the style


def test_labels_follow_the_scale_the_view_will_draw_at(seed):
    """As draw.js: every line at 6 px and more, the op alone on boxes 9 px tall and more, then none."""
    big = ET.fromstring(f"<svg xmlns='http://www.w3.org/2000/svg'>{poster_html(seed, 1392, 640)}</svg>")
    assert texts(big) == [str(p.label) for p in seed.nodes]
    def drawn_at(width: int) -> tuple[float, list[str]]:
        root = ET.fromstring(f"<svg xmlns='http://www.w3.org/2000/svg'>{poster_html(seed, width, 640)}</svg>")
        return fit_scale(seed, width, box_height(seed, width, 640)), texts(root)

    k, mid = drawn_at(round(seed.width * 0.45 + 24))
    assert 11 * k < 6 and min(p.h for p in seed.nodes) * k >= 9
    assert mid == [str(p.label).split("\n")[0] for p in seed.nodes]
    k, small = drawn_at(300)
    assert min(p.h for p in seed.nodes) * k < 9 and small == []


def test_the_box_height_is_the_views(seed):
    """box.js: the picture's height at the fitted scale (at most 2), between 260 and the most."""
    k = min(2, (GRAPH_PX - 24) / seed.width)
    assert box_height(seed, GRAPH_PX, 640) == max(260, min(640, round(seed.height * k + 24)))
    assert box_height(seed, 100, 640) == 260


def test_text_from_a_run_stays_text_in_the_svg(seed):
    """A label from a learner's code (a parameter's name, a line) cannot open an element."""
    hostile = "</svg><script>alert(1)</script>&<b>"
    nodes = tuple(dataclasses.replace(p, label=hostile + "\n" + str(p.label)) for p in seed.nodes)
    frames = tuple(dataclasses.replace(f, label=hostile) for f in seed.frames)
    evil = dataclasses.replace(seed, nodes=nodes, frames=frames)
    for text in (svg_file(evil), handout_html(evil, None, title="t")):
        assert "<script>alert" not in text
    root = ET.fromstring(svg_file(evil))
    assert not list(root.iter(f"{SVG}script"))
    assert all(t.startswith(hostile) for t in texts(root))


def test_the_handout_carries_the_poster_before_its_script(seed):
    text = view_handout(seed)
    poster = text.index('data-testid="graph-poster"')
    assert poster < text.index('id="stockdemo-data"') < text.rindex("<script>")
    assert len(re.findall(r'<rect class="pb', text)) == len(seed.nodes)


def test_a_picture_too_big_for_a_poster_gets_none():
    """Past MAX_BOXES an SVG paints slower than the view's canvas: the view draws it alone."""
    big = layout(run(RunConfig(cell="gru", seq_len=200, num_layers=4)).graph, "unrolled", max_nodes=None)
    assert len(big.nodes) > MAX_BOXES
    assert poster_html(big, GRAPH_PX, 640) == ""
    assert 'data-testid="graph-poster"' not in view_handout(big)


def test_the_command_line_writes_the_svg_with_no_graphviz(tmp_path, capsys, monkeypatch):
    """``graph --format svg``: the poster's drawing of every node placed, Graphviz's programs
    not needed (none on PATH here)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    path = tmp_path / "gru.svg"
    assert cli(["graph", "--cell", "gru", "--seq-len", "8", "--format", "svg", "-o", str(path)]) == 0
    picture = layout(run(RunConfig(cell="gru", seq_len=8)).graph, "auto", max_nodes=None)
    root = ET.parse(path).getroot()
    assert len(boxes(root)) == len(picture.nodes)
    assert f"{picture.counts.nodes} nodes" in capsys.readouterr().err


def test_a_thumbnail_fits_its_box_draws_every_box_and_rings_exactly_the_ones_asked(seed):
    ringed = [p.id for p in seed.nodes if p.kind == "op"][:3]
    root = ET.fromstring(thumbnail_svg(seed, ringed, 240, 44))
    assert (root.get("width"), root.get("height")) == ("240", "44")
    assert len(boxes(root)) == len(seed.nodes)
    rings = [r for g in root.iter(f"{SVG}g") if g.get("stroke") == theme.GREEN for r in g.iter(f"{SVG}rect")]
    assert len(rings) == 3
    by_id = {p.id: p for p in seed.nodes}
    for ring, node in zip(rings, (by_id[i] for i in ringed), strict=True):  # around each box, in order
        assert float(ring.get("x")) < node.x - node.w / 2 and float(ring.get("y")) < node.y - node.h / 2
    x, y, w, h = map(float, root.get("viewBox").split())
    assert x <= 0 and y <= 0 and w >= seed.width and h >= seed.height  # the whole picture, fitted
    assert abs(w / h - 240 / 44) < 0.01  # not stretched
    assert not [g for g in ET.fromstring(thumbnail_svg(seed, [], 240, 44)).iter(f"{SVG}g")]
