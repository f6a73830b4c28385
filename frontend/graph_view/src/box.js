// The view's box: how tall the graph may be on its page, and the canvas sized to it.
//
// The view `v` holds `size` ([W, H], css px), `dpr` and `scroller` (found once).

import { fit, framing } from "./camera.js";

const MIN_BOX_PX = 260;
// Below this share of the window left under it, a view takes a screenful.
const FILL_SHARE = 0.45;

/**
 * The box's height on a stage, or on a page's main graph: what the viewport leaves below
 * the view's top.
 */
function fillHeight(v) {
  // Streamlit scrolls its main area, not the window: found once (reading every
  // ancestor's computed style forces a style pass, on every update of a drag).
  if (!v.scroller?.isConnected) {
    const host = v.root.getRootNode().host || v.root.parentElement;
    let e = host;
    while (e && e !== document.body) {
      const oy = getComputedStyle(e).overflowY;
      if (oy === "auto" || oy === "scroll") break;
      e = e.parentElement || e.getRootNode().host;
    }
    v.scroller = e || document.body;
  }
  const scroller = v.scroller;
  const scrolled = scroller !== document.body ? scroller.scrollTop : window.scrollY;
  const top = v.main.getBoundingClientRect().top + scrolled;
  const rootTop = v.root.getBoundingClientRect().top + scrolled;
  const below = v.root.getBoundingClientRect().bottom - v.main.getBoundingClientRect().bottom;
  const left = Math.floor(window.innerHeight - top - below - 12);
  // Low on a page (its controls above it fill the first screen), a graph that filled what
  // is left would be a strip: it takes a screen's height instead, whole once scrolled to.
  if (!v.data.stage && left < FILL_SHARE * window.innerHeight) {
    const header = document.querySelector("[data-testid='stHeader']")?.offsetHeight || 0;
    return Math.max(MIN_BOX_PX, Math.floor(window.innerHeight - header - (top - rootTop) - below - 24));
  }
  return Math.max(MIN_BOX_PX, left);
}

/**
 * Size the box and the canvas, then fit or redraw. A new box size fits afresh; `refit`
 * (a new picture) keeps the camera while it frames the picture (camera.js's fitTransform),
 * and a camera the learner moved while it shows any of it. Returns whether the canvas
 * was resized (then drawn again at once, once the view has its colours).
 */
export function resize(v, refit = false) {
  // A wide, flat picture gets a flatter box: no tall empty band under it.
  const wide = v.stage.getBoundingClientRect().width;
  const d = v.data;
  const fitH = Math.round(d.height * Math.min(2, (wide - 24) / Math.max(1, d.width)) + 24);
  let boxH = Math.max(MIN_BOX_PX, Math.min(d.box_height, fitH));
  // A stage's graph grows into its box; another page's keeps to what its picture needs.
  if (d.stage) boxH = fillHeight(v);
  else if (d.fill) boxH = Math.max(MIN_BOX_PX, Math.min(fillHeight(v), fitH));
  if (document.fullscreenElement) boxH = null;
  const want = boxH === null ? "" : `${boxH}px`;
  if (v.root.style.getPropertyValue("--gv-height") !== want) {
    if (want) v.root.style.setProperty("--gv-height", want);
    else v.root.style.removeProperty("--gv-height");
  }
  const r = v.stage.getBoundingClientRect();
  const W = Math.max(1, Math.round(r.width)), H = Math.max(1, Math.round(r.height));
  let resized = false;
  const dpr = window.devicePixelRatio || 1;
  if (W !== v.size[0] || H !== v.size[1] || v.dpr !== dpr) {
    v.size = [W, H];
    v.dpr = dpr;
    v.canvas.width = Math.round(W * dpr);
    v.canvas.height = Math.round(H * dpr);
    v.canvas.style.width = `${W}px`;
    v.canvas.style.height = `${H}px`;
    resized = true;
  }
  // A box resized under a code graph (a line of text above it came or went) keeps the
  // camera's scale while the graph fits: its top left corner stays, and so do the nodes.
  const keepScale = d.stage?.grows === "both" && v.drawnT ? v.t : null;
  if (v.fitted && resized) fit(v, keepScale, refit || !!v.motion); // a bare resize: no animation
  else if (v.fitted && refit) fit(v, v.t, true);
  else if (refit && !framing(v, v.t).seen) fit(v, null, true); // the learner's camera lost the graph
  else v.schedule();
  if (resized && v.colors) v.drawNow(); // a resized canvas is blank: not for a frame
  return resized;
}
