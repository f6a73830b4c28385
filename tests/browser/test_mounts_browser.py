"""A component's late cleanup leaves the newer render's editor and graph alone, in Chromium.

Streamlit (components v2) calls a render's cleanup at once when a newer payload came before
that render's asynchronous call returned; on a loaded machine that call lands after the newer
render has updated the same editor. It destroyed the editor (CI: a teacher's Your code page
left without its CodeMirror right after a run, ``.cm-scroller`` gone for good) and, the same
way, the graph view. Here the shipped bundles are driven the way Streamlit drives them: two
renders into one element, the first one's cleanup late, then the unmount's.
"""

from __future__ import annotations

import json

import pytest

from stockdemo import RunConfig, run
from stockdemo.layout.steps import layout
from stockdemo.render.payload import view_json

pytestmark = pytest.mark.browser

RENDERS = """async ([bundle, first, second, probe]) => {
  const module = await import(bundle);
  const host = document.createElement("div");
  document.body.append(host);
  const render = (data) => module.default({ parentElement: host, data, setTriggerValue() {},
                                            setStateValue() {} });
  const late = render(first);
  const last = render(second);
  late();  // the first render's cleanup, after the second render drew
  const kept = !!host.querySelector(probe);
  last();  // the unmount: the last render's cleanup
  return { kept, gone: !host.querySelector(probe) };
}"""


def drive(page, server: str, bundle: str, first: str, second: str, probe: str) -> dict:
    page.goto(f"{server}/app/static/{bundle}")  # the app's origin, for the module import
    return page.evaluate(RENDERS, [f"/app/static/{bundle}", first, second, probe])


def test_a_late_cleanup_keeps_the_code_editor_and_the_unmount_removes_it(server, page):
    first, second = (json.dumps({"doc": f"x = {n}\n", "doc_key": str(n)}) for n in (1, 2))
    result = drive(page, server, "code_editor.js", first, second, ".cm-scroller")
    assert result == {"kept": True, "gone": True}
    assert page.console_errors == []


def test_a_late_cleanup_keeps_the_graph_view_and_the_unmount_removes_it(server, page):
    picture = layout(run(RunConfig(seq_len=3)).graph, "unrolled", max_nodes=None)
    first, second = view_json(picture), view_json(picture, selected=picture.nodes[0].id)
    result = drive(page, server, "graph_view.js", first, second, "[data-testid='graph-view']")
    assert result == {"kept": True, "gone": True}
    assert page.console_errors == []
