// stockdemo's graph view: a Streamlit components v2 frontend.
//
// The server sends a picture already laid out (positions in points, y down) and,
// when asked, the trace of the run; the view only draws, zooms (d3-zoom) and
// replays. The one value sent back is the selected node's id (and, on a stage, its
// controls' values: protocol.js).

import { mount, unmount } from "./mounts.js";
import { GraphView } from "./view.js";

const views = new WeakMap();

/** The component's entry: one view per parent element, updated by each payload. */
export default function graphView(component) {
  const { parentElement, setStateValue, setTriggerValue } = component;
  return mount(views, parentElement, () => new GraphView(parentElement), (view, frameAt) => {
    view.setStateValue = setStateValue;
    view.setTriggerValue = setTriggerValue || (() => {});
    // The same payload from the page again, after moves answered on the stage's socket
    // (direct.js), is older than what those drew: it is not drawn again.
    if (component.data === view.hostData && view.servedSince) return;
    view.hostData = component.data;
    view.servedSince = false;
    // The server sends the payload as JSON text (it encodes the picture once, not per rerun).
    view.update(typeof component.data === "string" ? JSON.parse(component.data) : component.data);
    if (frameAt !== undefined) view.drawDue(frameAt);
  });
}

/** The view drawn in `parentElement` is gone for good (a notebook's output cleared). */
export function dropView(parentElement) {
  unmount(views, parentElement);
}
