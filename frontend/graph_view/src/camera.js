// The camera: one d3-zoom transform from the picture's points to the canvas's pixels,
// and the moves made on it (fit, zoom, pan, centre, keep in view).
//
// The view `v` holds `t` (the transform now), `zoom` and `sel` (d3-zoom and its canvas),
// `fitted` (the camera follows the picture until the learner zooms or pans) and `size`.

import { select } from "d3-selection";
import { zoom, zoomIdentity } from "d3-zoom";
import { compareFit, paneRects } from "./compare.js";
import { easeCamera } from "./glide.js";

export const PAD = 12; // px around a fitted picture
export const ZOOM_STEP = 1.25; // one press of + or −
// A stage leaves this share of its width free for the graph to grow into: dragging T up
// then pans nothing and zooms out only every few steps.
const HEADROOM = 0.85;
// A new run keeps the camera while its graph, drawn with it, stays in the view and fills
// this share of the view's width or height; else the camera eases to the fit
// (docs/decisions.md, "A new run keeps the camera while the graph fills three quarters").
export const FILL = 0.75;

/** d3-zoom on the view's canvas (no double-click zoom): a gesture unfits the camera. */
export function attachZoom(v) {
  v.t = zoomIdentity;
  v.zoom = zoom()
    .scaleExtent([0.01, 8])
    .on("zoom", (ev) => {
      v.t = ev.transform;
      if (ev.sourceEvent) theirs(v);
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
 * The box the picture is drawn in (the canvas, or compare mode's pane: W, H) and what is drawn
 * in it, in the picture's points (x0, y0, w, h): its boxes and outlines, no margin.
 */
function room(v) {
  const [W, H] = v.size;
  if (v.cmp) {
    const [pane] = paneRects(W, H), a = v.cmp.data, b = v.data;
    return { W: pane.w, H: pane.h, x0: 0, y0: 0, w: Math.max(a.width, b.width, 1), h: Math.max(a.height, b.height, 1) };
  }
  const b = v.p.bounds;
  return { W, H, x0: b.x0, y0: b.y0, w: Math.max(b.x1 - b.x0, 1), h: Math.max(b.y1 - b.y0, 1) };
}

/** The picture drawn with camera `t`: is it all in the view, does it fill FILL of a side, is any of it seen? */
export function framing(v, t) {
  const r = room(v);
  const x = t.x + r.x0 * t.k, y = t.y + r.y0 * t.k, w = r.w * t.k, h = r.h * t.k;
  return { inside: x >= -0.5 && y >= -0.5 && x + w <= r.W + 0.5 && y + h <= r.H + 0.5,
    fills: w >= FILL * r.W || h >= FILL * r.H,
    seen: x < r.W && y < r.H && x + w > 0 && y + h > 0 };
}

/** The transform that shows the whole picture. Comparing, one camera shows both runs. */
function fitAll(v) {
  const [W, H] = v.size;
  if (v.cmp) {
    const f = compareFit(W, H, v.cmp.data, v.data, PAD, v.paneLabels[0].offsetHeight + 6);
    return zoomIdentity.translate(f.x, f.y).scale(f.k);
  }
  const d = v.data, stage = d.stage;
  if (!stage) { // the layout's whole box, margins included: as the handout's poster (poster.py)
    const k = Math.min((W - 2 * PAD) / Math.max(d.width, 1), (H - 2 * PAD) / Math.max(d.height, 1), 2);
    return zoomIdentity.translate((W - d.width * k) / 2, (H - d.height * k) / 2).scale(k);
  }
  // A stage fits what it draws, its boxes and outlines: the layout's margins are no use there.
  const r = room(v);
  const kW = (W - 2 * PAD) / r.w, kH = (H - 2 * PAD) / r.h;
  // A stage: time runs to the right from a fixed left edge. A learner's code may also add
  // layers: then the top edge stays too, with room below (stage.grows "both"), except on a
  // projector, where the boxes' size is what the back row needs.
  const both = stage.grows === "both";
  const share = both && stage.present ? 1 : HEADROOM;
  return onStage(v, Math.min(kW * share, both ? kH * share : kH, 2));
}

/** A stage's camera at scale k: the picture's left edge (and top, growing both ways) fixed. */
function onStage(v, k) {
  const r = room(v);
  const y = v.data.stage.grows === "both" ? PAD - r.y0 * k : v.size[1] / 2 - (r.y0 + r.h / 2) * k;
  return zoomIdentity.translate(PAD - r.x0 * k, y).scale(k);
}

/**
 * The camera for the picture: `keep` (a stage keeps its scale, its edges anchored) while the
 * picture drawn with it stays in the view and fills FILL of its width or height (or is as
 * big as the fit allows); else the fit.
 */
export function fitTransform(v, keep = null) {
  const f = fitAll(v);
  if (!keep) return f;
  const kept = v.data.stage && !v.cmp ? onStage(v, keep.k) : zoomIdentity.translate(keep.x, keep.y).scale(keep.k);
  const { inside, fills } = framing(v, kept);
  return inside && (fills || kept.k >= f.k) ? kept : f;
}

/**
 * Fit the picture; `keep`: the camera to keep if it still frames the new picture (fitTransform);
 * `glide`: the camera eases there once the nodes have glided (glide.js).
 */
export function fit(v, keep = null, glide = false) {
  const f = fitTransform(v, keep);
  v.zoom.scaleExtent([Math.min(f.k / 2, 0.5), 8]);
  if (glide) easeCamera(v, f);
  else if (v.motion) v.motion.camTo = null; // Fit pressed mid-glide: there at once
  v.zoom.transform(v.sel, f);
  v.fitted = true;
}

/** The learner moved the camera (wheel, pinch, drag, keys): it is theirs until Fit. */
function theirs(v) {
  v.fitted = false;
  if (v.motion) v.motion.userMoved = true;
}

/** Node `i` in the middle, at a readable scale at least. */
export function centerOn(v, i) {
  const [W, H] = v.size;
  const k = Math.max(v.t.k, Math.min(1.2, 8));
  const p = v.p;
  theirs(v);
  v.zoom.transform(v.sel, zoomIdentity.translate(W / 2 - p.x[i] * k, H / 2 - p.y[i] * k).scale(k));
}

/** Node `i` into the middle if it is near an edge or off the canvas. */
export function ensureVisible(v, i) {
  const [W, H] = v.size;
  const sx = v.p.x[i] * v.t.k + v.t.x, sy = v.p.y[i] * v.t.k + v.t.y;
  if (sx < 20 || sy < 20 || sx > W - 20 || sy > H - 20) {
    theirs(v);
    v.zoom.translateBy(v.sel, (W / 2 - sx) / v.t.k, (H / 2 - sy) / v.t.k);
  }
}

/** Zoom by factor `f` about the canvas's centre. */
export function zoomBy(v, f) {
  theirs(v);
  v.zoom.scaleBy(v.sel, f, [v.size[0] / 2, v.size[1] / 2]);
}

/** Pan by (dx, dy) screen pixels. */
export function panBy(v, dx, dy) {
  theirs(v);
  v.zoom.translateBy(v.sel, dx / v.t.k, dy / v.t.k);
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
