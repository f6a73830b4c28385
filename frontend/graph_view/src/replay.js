// The two replays of a run, as frames over the drawn nodes.
//
// Record: one frame per op, in the order autograd created it (_sequence_nr).
// Backward: one frame per node the engine ran, in its real order, then one frame
// where the parameters receive their .grad, then the graph is freed: the real
// error a second backward() raised.

import { viridis } from "./draw.js";

export function buildReplay(data, p) {
  const tr = data.trace;
  if (!tr) return null;
  const n = p.n;
  // Record: leaves exist before the run; each op appears at its frame.
  const createdAt = new Float64Array(n).fill(Infinity);
  for (let i = 0; i < n; i++) {
    const kind = p.kind[i];
    if (kind === "input" || kind === "parameter" || kind === "fold" || kind === "loop") createdAt[i] = -1;
  }
  tr.forward.forEach((node, f) => {
    if (createdAt[node] > f) createdAt[node] = f;
  });
  const last = tr.forward.length - 1;
  for (let i = 0; i < n; i++) {
    if (p.kind[i] === "output") createdAt[i] = last;
  }
  const norms = [...tr.backward_norm, ...tr.param_norm].filter((v) => v > 0);
  const lo = norms.length ? Math.log10(Math.min(...norms)) : 0;
  const hi = norms.length ? Math.log10(Math.max(...norms)) : 1;
  const scale = (v) => (v > 0 ? viridis(hi > lo ? (Math.log10(v) - lo) / (hi - lo) : 1) : viridis(0));
  return { tr, createdAt, lo, hi, scale, forwardFrames: tr.forward.length,
    backwardFrames: tr.backward.length + 2 };
}

/** Frames of a mode: the scrubber's range. */
export function frameCount(rp, mode) {
  return mode === "forward" ? rp.forwardFrames : rp.backwardFrames;
}

/**
 * How the picture looks at playhead `pos` (frames with index < pos are done;
 * the last one fades in with pos's fraction).
 */
export function lookAt(rp, mode, pos, p, data) {
  if (!rp || !mode) {
    return { alpha: () => 1, fill: () => null, edgeShown: () => true, current: -1, norm: null };
  }
  const done = Math.ceil(pos) - 1; // index of the frame in progress or just done
  const frac = pos - Math.floor(pos) || 1;
  if (mode === "forward") {
    const ca = rp.createdAt;
    const alpha = (i) => (ca[i] < done ? 1 : ca[i] === done ? Math.max(0.15, frac) : 0.12);
    const ed = data.edges;
    return {
      alpha,
      fill: () => null,
      edgeShown: (e) => ca[ed.src[e]] <= done && ca[ed.dst[e]] <= done,
      current: done >= 0 ? rp.tr.forward[done] : -1,
      norm: null,
    };
  }
  const tr = rp.tr;
  const B = tr.backward.length;
  const norm = new Map();
  for (let f = 0; f <= Math.min(done, B - 1); f++) norm.set(tr.backward[f], tr.backward_norm[f]);
  if (done >= B) tr.param.forEach((node, j) => norm.set(node, tr.param_norm[j]));
  return {
    alpha: (i) => (norm.has(i) || p.kind[i] === "output" ? 1 : 0.35),
    fill: (i) => (norm.has(i) ? rp.scale(norm.get(i)) : null),
    edgeShown: () => true,
    current: done >= 0 && done < B ? tr.backward[done] : -1,
    norm,
  };
}
