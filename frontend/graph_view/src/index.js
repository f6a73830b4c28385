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
    // (direct.js), or one for an older Run than the code's socket drew, is older than what
    // those drew: it is not drawn again. The server sends it as JSON text (encoded once).
    if (view.fromPage(component.data) && frameAt !== undefined) view.drawDue(frameAt);
  });
}

/** The view drawn in `parentElement` is gone for good (a notebook's output cleared). */
export function dropView(parentElement) {
  unmount(views, parentElement);
}
