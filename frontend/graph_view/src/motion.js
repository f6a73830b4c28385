// From one run's picture to the next, keeping every node's identity.
//
// A node is the same node in two runs when its id is: ids are structural
// ("L0.t4/Tanh0": layer, step, op; "param/rnn.weight_hh_l0"), never payload
// indices. Nodes in both glide from their old place to their new one, a new node
// grows in from the node it attaches to, a removed one fades where it was (Heer and
// Robertson, InfoVis 2007: staged, in-place transitions read better than jumps).

export const MOTION_MS = 320;
// Then, where the new picture needs it, the camera's own glide to frame it (frame.js).
export const CAMERA_MS = 280;

/** 0..1 -> 0..1, slow at both ends. */
export function ease(u) {
  return u < 0.5 ? 4 * u * u * u : 1 - Math.pow(-2 * u + 2, 3) / 2;
}

/**
 * The plan of a transition from picture `a` (prepared, with its data `da`) to `b`/`db`.
 * For every node of b: where it starts (x0, y0, w0, h0) and whether it is new; the
 * nodes of a that b lacks (fading out); the frames (block outlines) matched by label.
 */
export function plan(a, da, b, db) {
  const n = b.n;
  const from = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const j = a.index.get(db.nodes.id[i]);
    if (j !== undefined) from[i] = j;
  }
  const x0 = new Float64Array(n), y0 = new Float64Array(n);
  const w0 = new Float64Array(n), h0 = new Float64Array(n);
  const born = new Uint8Array(n);
  // A new node starts on the node it attaches to that the old picture has: the
  // one feeding it, else the one it feeds (searched a few hops out), else itself.
  const preds = new Map(), succs = new Map();
  for (let e = 0; e < db.edges.src.length; e++) {
    const s = db.edges.src[e], d = db.edges.dst[e];
    if (!preds.has(d)) preds.set(d, []);
    preds.get(d).push(s);
    if (!succs.has(s)) succs.set(s, []);
    succs.get(s).push(d);
  }
  const anchor = (i) => {
    const seen = new Set([i]);
    let ring = [i];
    for (let hop = 0; hop < 4 && ring.length; hop++) {
      const next = [];
      for (const k of ring) {
        for (const m of [...(preds.get(k) || []), ...(succs.get(k) || [])]) {
          if (seen.has(m)) continue;
          if (from[m] >= 0) return from[m];
          seen.add(m);
          next.push(m);
        }
      }
      ring = next;
    }
    return -1;
  };
  let born_n = 0;
  for (let i = 0; i < n; i++) {
    const j = from[i];
    if (j >= 0) {
      x0[i] = a.x[j]; y0[i] = a.y[j]; w0[i] = a.w[j]; h0[i] = a.h[j];
      continue;
    }
    born[i] = 1;
    born_n += 1;
    const k = anchor(i);
    if (k >= 0) { x0[i] = a.x[k]; y0[i] = a.y[k]; } else { x0[i] = b.x[i]; y0[i] = b.y[i]; }
    w0[i] = b.w[i] * 0.2; h0[i] = b.h[i] * 0.2;
  }
  const kept = new Set();
  for (let i = 0; i < n; i++) if (from[i] >= 0) kept.add(from[i]);
  const gone = [];
  for (let j = 0; j < a.n; j++) if (!kept.has(j)) gone.push(j);
  // Edges of a whose two ends are not both in b, or not joined there: they fade.
  const bEdges = new Set();
  for (let e = 0; e < db.edges.src.length; e++) {
    bEdges.add(db.nodes.id[db.edges.src[e]] + "\u0000" + db.nodes.id[db.edges.dst[e]]);
  }
  const goneEdges = [];
  for (let e = 0; e < da.edges.src.length; e++) {
    const key = da.nodes.id[da.edges.src[e]] + "\u0000" + da.nodes.id[da.edges.dst[e]];
    if (!bEdges.has(key)) goneEdges.push(e);
  }
  const aFrames = new Map();
  da.frames.label.forEach((label, f) => aFrames.set(label, f));
  const frameFrom = db.frames.label.map((label) => aFrames.get(label) ?? -1);
  return { from, x0, y0, w0, h0, born, born_n, gone, goneEdges, frameFrom, n };
}

/** Box `i` of `b` at time `u` (eased): its centre and size. */
function lerp(p, q, u) {
  return p + (q - p) * u;
}

/**
 * The picture b as it stands at eased time u: positions and sizes interpolated,
 * edge ends re-clipped to the moving boxes, frames moved with their blocks.
 */
export function between(pl, b, db, da, u) {
  const n = b.n;
  const x = new Float64Array(n), y = new Float64Array(n), w = new Float64Array(n), h = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = lerp(pl.x0[i], b.x[i], u);
    y[i] = lerp(pl.y0[i], b.y[i], u);
    w[i] = lerp(pl.w0[i], b.w[i], u);
    h[i] = lerp(pl.h0[i], b.h[i], u);
  }
  const ed = db.edges, m = ed.src.length;
  const ex0 = new Float64Array(m), ey0 = new Float64Array(m), ex1 = new Float64Array(m), ey1 = new Float64Array(m);
  for (let e = 0; e < m; e++) {
    const s = ed.src[e], d = ed.dst[e];
    const dx = x[d] - x[s], dy = y[d] - y[s];
    [ex0[e], ey0[e]] = clip(x[s], y[s], w[s] / 2, h[s] / 2, dx, dy);
    [ex1[e], ey1[e]] = clip(x[d], y[d], w[d] / 2, h[d] / 2, -dx, -dy);
  }
  const fr = db.frames;
  const frames = { label: fr.label, x: [], y: [], w: [], h: [] };
  fr.label.forEach((_, f) => {
    const g = pl.frameFrom[f];
    const src = g >= 0 ? da.frames : null;
    for (const k of ["x", "y", "w", "h"]) frames[k].push(src ? lerp(src[k][g], fr[k][f], u) : fr[k][f]);
  });
  return { p: { ...b, x, y, w, h, ex0, ey0, ex1, ey1 }, data: { ...db, frames } };
}

/**
 * What picture a had and b lacks, as a picture of its own (nodes, edges and block
 * outlines), drawn fading at its old place under the moving one.
 */
export function ghosts(pl, a, da) {
  const idx = pl.gone;
  const pick = (arr) => Float64Array.from(idx, (j) => arr[j]);
  const nodes = { ...da.nodes, fill: idx.map((j) => da.nodes.fill[j]) };
  const ge = pl.goneEdges;
  const pickE = (arr) => Float64Array.from(ge, (e) => arr[e]);
  const kept = new Set(pl.frameFrom.filter((f) => f >= 0));
  const fi = da.frames.label.map((_, f) => f).filter((f) => !kept.has(f));
  const frames = {};
  for (const k of ["label", "x", "y", "w", "h"]) frames[k] = fi.map((f) => da.frames[k][f]);
  const p = {
    ...a, n: idx.length, x: pick(a.x), y: pick(a.y), w: pick(a.w), h: pick(a.h),
    kind: idx.map((j) => a.kind[j]), lines: idx.map((j) => a.lines[j]),
    ex0: pickE(a.ex0), ey0: pickE(a.ey0), ex1: pickE(a.ex1), ey1: pickE(a.ey1),
  };
  const edges = { src: ge.map((e) => da.edges.src[e]), dst: ge.map((e) => da.edges.dst[e]),
    recurrent: ge.map((e) => da.edges.recurrent[e]) };
  return { p, data: { ...da, nodes, edges, frames }, empty: !idx.length && !ge.length && !fi.length };
}

function clip(cx, cy, hw, hh, dx, dy) {
  if (dx === 0 && dy === 0) return [cx, cy];
  const s = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return [cx + dx * s, cy + dy * s];
}

/**
 * A camera as (k, the world point shown at the box's anchor): interpolating that,
 * with k in log space, moves and zooms as one smooth glide instead of swinging.
 */
export function cameraBetween(t0, t1, anchor, u) {
  const [ax, ay] = anchor;
  const w0 = [(ax - t0.x) / t0.k, (ay - t0.y) / t0.k];
  const w1 = [(ax - t1.x) / t1.k, (ay - t1.y) / t1.k];
  const k = Math.exp(lerp(Math.log(t0.k), Math.log(t1.k), u));
  const wx = lerp(w0[0], w1[0], u), wy = lerp(w0[1], w1[1], u);
  return { k, x: ax - wx * k, y: ay - wy * k };
}
