// The camera: one d3-zoom transform from the picture's points to the canvas's pixels,
// and the moves made on it (fit, zoom, pan, centre, keep in view).
//
// The view `v` holds `t` (the transform now), `zoom` and `sel` (d3-zoom and its canvas),
// `fitted` (the camera follows the picture until the learner zooms or pans) and `size`.

import { select } from "d3-selection";
import { zoom, zoomIdentity } from "d3-zoom";
import { compareFit } from "./compare.js";

export const PAD = 12; // px around a fitted picture
export const ZOOM_STEP = 1.25; // one press of + or −
// A stage leaves this share of its width free for the graph to grow into: dragging T up
// then pans nothing and zooms out only every few steps...
const HEADROOM = 0.85;
// ...and zooms back in once the graph has shrunk to this share of what would fit.
const SHRUNK = 1 / 1.8;

/** d3-zoom on the view's canvas (no double-click zoom): a gesture unfits the camera. */
export function attachZoom(v) {
  v.t = zoomIdentity;
  v.zoom = zoom()
    .scaleExtent([0.01, 8])
    .on("zoom", (ev) => {
      v.t = ev.transform;
      if (ev.sourceEvent) {
        v.fitted = false;
        if (v.motion) v.motion.userMoved = true;
      }
      v.schedule();
    })
    // A wheel, pinch or drag under way: a big picture's frames come from bitmaps (layer.js)
    // until it ends, then one in full detail.
    .on("start", (ev) => {
      if (ev.sourceEvent) v.gesture = true;
    })
    .on("end", () => {
      if (!v.gesture) return;
      v.gesture = false;
      v.schedule();
    });
  v.sel = select(v.canvas).call(v.zoom).on("dblclick.zoom", null);
}

/**
 * The transform that shows the whole picture; on a stage, `keep`'s scale is kept while the
 * graph still fits and has not shrunk to a corner. Comparing, one camera shows both runs.
 */
export function fitTransform(v, keep = null) {
  const [W, H] = v.size;
  const d = v.data;
  if (v.cmp) {
    const f = compareFit(W, H, v.cmp.data, d, PAD, v.paneLabels[0].offsetHeight + 6);
    return zoomIdentity.translate(f.x, f.y).scale(f.k);
  }
  const kW = (W - 2 * PAD) / Math.max(d.width, 1), kH = (H - 2 * PAD) / Math.max(d.height, 1);
  if (!d.stage) {
    const k = Math.min(kW, kH, 2);
    return zoomIdentity.translate((W - d.width * k) / 2, (H - d.height * k) / 2).scale(k);
  }
  // A stage: time runs to the right from a fixed left edge. A learner's code may also add
  // layers: then the top edge stays too, with room below (stage.grows "both").
  const both = d.stage.grows === "both";
  const roomy = Math.min(kW * HEADROOM, both ? kH * HEADROOM : kH, 2);
  let k = roomy;
  if (keep && keep.k <= Math.min(kW, kH, 2) && keep.k >= roomy * SHRUNK) k = keep.k;
  return zoomIdentity.translate(PAD, both ? PAD : (H - d.height * k) / 2).scale(k);
}

/** Fit the picture; `glide`: a picture in motion moves the camera with it. */
export function fit(v, keep = null, glide = false) {
  const f = fitTransform(v, keep);
  v.zoom.scaleExtent([Math.min(f.k / 2, 0.5), 8]);
  if (glide && v.motion) v.motion.camTo = f;
  v.zoom.transform(v.sel, f);
  v.fitted = true;
}

/** Node `i` in the middle, at a readable scale at least. */
export function centerOn(v, i) {
  const [W, H] = v.size;
  const k = Math.max(v.t.k, Math.min(1.2, 8));
  const p = v.p;
  v.zoom.transform(v.sel, zoomIdentity.translate(W / 2 - p.x[i] * k, H / 2 - p.y[i] * k).scale(k));
  v.fitted = false;
}

/** Node `i` into the middle if it is near an edge or off the canvas. */
export function ensureVisible(v, i) {
  const [W, H] = v.size;
  const sx = v.p.x[i] * v.t.k + v.t.x, sy = v.p.y[i] * v.t.k + v.t.y;
  if (sx < 20 || sy < 20 || sx > W - 20 || sy > H - 20) {
    v.zoom.translateBy(v.sel, (W / 2 - sx) / v.t.k, (H / 2 - sy) / v.t.k);
    v.fitted = false;
  }
}

/** Zoom by factor `f` about the canvas's centre. */
export function zoomBy(v, f) {
  v.zoom.scaleBy(v.sel, f, [v.size[0] / 2, v.size[1] / 2]);
  v.fitted = false;
}

/** Pan by (dx, dy) screen pixels. */
export function panBy(v, dx, dy) {
  v.zoom.translateBy(v.sel, dx / v.t.k, dy / v.t.k);
  v.fitted = false;
}

/**
 * The box of node `id` as drawn on the last frame, in client (viewport) pixels, or null.
 * In compare mode `pane` picks "a" or "b" (the default). The view's test hook.
 */
export function screenBox(v, id, pane = "b") {
  const inA = v.cmp && pane === "a";
  const p = inA ? v.cmp.pa : v.drawnP || v.p, t = v.drawnT || v.t;
  const i = p.index.get(id);
  if (i === undefined) return null;
  const r = v.canvas.getBoundingClientRect();
  const off = v.cmp && v.panes ? v.panes[inA ? 0 : 1] : { x: 0, y: 0 };
  const k = t.k;
  return { x: r.left + off.x + t.x + (p.x[i] - p.w[i] / 2) * k,
    y: r.top + off.y + t.y + (p.y[i] - p.h[i] / 2) * k, width: p.w[i] * k, height: p.h[i] * k };
}
