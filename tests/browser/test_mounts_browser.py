"""The editor and the graph view stay on the page and show the newest payload, however
Streamlit's calls and cleanups come, in Chromium.

Streamlit (components v2) calls a component's function from an effect, asynchronously, one
call per payload; a call whose effect a newer payload already replaced has its cleanup called
at once, a few microtasks after it returns. On a loaded machine (CI) two things happened:
- a late cleanup destroyed the editor a newer call had updated: a teacher's Your code page
  left without its CodeMirror (``.cm-scroller`` gone for good);
- the calls came out of order, the newer payload's first: the older one put the seed back in
  a student's editor over the teacher's code, and its cleanup then destroyed the editor.
Here the shipped bundles are driven the way Streamlit drives them: in order with a late
cleanup, then out of order, then the unmount (the element leaves the page, then the cleanup).
"""

from __future__ import annotations

import json

import pytest

from stockdemo import RunConfig, run
from stockdemo.layout.steps import layout
from stockdemo.render.payload import view_json

pytestmark = pytest.mark.browser

RENDERS = """async ([bundle, payloads, probe, read]) => {
  const module = await import(bundle);
  const host = document.createElement("div");
  document.body.append(host);
  const render = (data) => module.default({ parentElement: host, data, setTriggerValue() {},
                                            setStateValue() {} });
  // Two frames, each with a task after it: a payload is applied at a frame or a timer, and the
  // editor's own update waits for the next frame and a task (mounts.js, code_editor's index.js).
  const settled = async () => {
    for (let i = 0; i < 2; i++) await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  };
  const shown = () => ({ alive: !!host.querySelector(probe), says: new Function("host", read)(host) });
  const [first, second, third] = payloads;
  // In order; the first call's cleanup late (its effect replaced before the call returned).
  const late = render(first);
  render(second);
  await Promise.resolve();
  late();
  await settled();
  const inOrder = shown();
  // Out of order: the newest payload's call first, then the older one's, its cleanup at once.
  const last = render(third);
  const stale = render(second);
  await Promise.resolve();
  stale();
  await settled();
  const outOfOrder = shown();
  // The unmount: React takes the element off the page, then runs the effects' cleanups.
  host.remove();
  last();
  await settled();
  return { inOrder, outOfOrder, gone: !host.querySelector(probe) };
}"""


def drive(page, server: str, bundle: str, payloads: list[str], probe: str, read: str) -> dict:
    page.goto(f"{server}/app/static/{bundle}")  # the app's origin, for the module import
    return page.evaluate(RENDERS, [f"/app/static/{bundle}", payloads, probe, read])


def test_the_code_editor_shows_the_newest_payload_and_goes_only_with_the_unmount(server, page):
    payloads = [json.dumps({"doc": f"x = {n}\n", "doc_key": str(n)}) for n in (1, 2, 3)]
    result = drive(page, server, "code_editor.js", payloads, ".cm-scroller", "return host.ceText()")
    assert result == {"inOrder": {"alive": True, "says": "x = 2\n"},
                      "outOfOrder": {"alive": True, "says": "x = 3\n"}, "gone": True}
    assert page.console_errors == []


def test_the_graph_view_shows_the_newest_payload_and_goes_only_with_the_unmount(server, page):
    picture = layout(run(RunConfig(seq_len=3)).graph, "unrolled", max_nodes=None)
    ids = [picture.nodes[0].id, picture.nodes[1].id]
    payloads = [view_json(picture), view_json(picture, selected=ids[0]), view_json(picture, selected=ids[1])]
    view = "[data-testid='graph-view']"
    result = drive(page, server, "graph_view.js", payloads, view,
                   f"return host.querySelector(\"{view}\")?.dataset.selected ?? null")
    assert result == {"inOrder": {"alive": True, "says": ids[0]},
                      "outOfOrder": {"alive": True, "says": ids[1]}, "gone": True}
    assert page.console_errors == []
