// Big pictures drawn through bitmaps. Drawing tens of thousands of boxes and edges costs far
// more than a frame, mostly in the canvas's raster, so a big picture is drawn into a bitmap
// (the layer) that the frame copies, and:
// - a frame that moves only the marks (hover, selection) is the layer and the marks;
// - while the learner zooms or pans, a frame is the layer scaled and moved, over an overview
//   (the whole picture, drawn once when idle) where the layer does not reach, and the marks;
// - once the gesture ends (camera.js), the frame is drawn again in full detail.
// Smaller pictures are drawn straight on the canvas, every frame.
//
// The view `v` holds `layer` and `overview` (bitmaps, with the camera each was drawn at) and
// `gesture` (a wheel, pinch or drag under way, set by camera.js).

import { drawBase, drawMarks } from "./draw.js";

// Boxes + edges from which a picture is big: whole, it costs more than a frame to draw
// (bench/bench_zoom.py, software raster).
const BIG = 5000;
const OVERVIEW_PX = 4e6; // the overview's pixels at most
const OVERVIEW_FIT = 2; // the overview's scale, in times the scale that fits the view

/** A picture big enough that its frames go through the layer. */
export function big(p, data) {
  return p.n + data.edges.src.length >= BIG;
}

/** What the layer shows, besides the camera. */
const stateOf = (v, p, data) => [p, data, v.mode, Math.floor(v.pos), v.newSet, v.colors, v.canvas.width,
  v.canvas.height];

/**
 * A frame of a big picture: the layer as it is when only the marks moved, the layer (and the
 * overview) moved and scaled during a gesture or the camera's glide (`moving`), else the layer
 * drawn anew.
 */
export function drawLayered(v, p, data, t, look, marks, moving = false) {
  const L = v.layer || (v.layer = { canvas: document.createElement("canvas"), t: null, state: [] });
  const state = stateOf(v, p, data);
  const same = !!L.t && state.every((x, j) => x === L.state[j]);
  const ctx = v.ctx;
  if (same && L.t.k === t.k && L.t.x === t.x && L.t.y === t.y) {
    ctx.drawImage(L.canvas, 0, 0);
  } else if ((v.gesture || moving) && (same || v.overview?.p === p)) {
    moved(v, same ? L : null, t);
  } else {
    if (L.canvas.width !== v.canvas.width || L.canvas.height !== v.canvas.height) {
      L.canvas.width = v.canvas.width;
      L.canvas.height = v.canvas.height;
    }
    const lc = L.canvas.getContext("2d");
    lc.clearRect(0, 0, L.canvas.width, L.canvas.height);
    drawBase(lc, p, data, t, v.size, look, v.colors);
    L.t = t;
    L.state = state;
    ctx.drawImage(L.canvas, 0, 0);
    if (v.overview?.p !== p || v.overview.colors !== v.colors) {
      v.overview = null;
      whenIdle(() => drawOverview(v, v.p, v.data));
    }
  }
  drawMarks(ctx, p, t, v.size, look, marks, v.colors);
}

/** The layer `L` (if any) moved and scaled to camera `t`, over the overview where it does not reach. */
function moved(v, L, t) {
  const ctx = v.ctx, dpr = v.dpr;
  const [W, H] = v.size;
  const s = L ? t.k / L.t.k : 1;
  const lx = L ? t.x - s * L.t.x : 0, ly = L ? t.y - s * L.t.y : 0, lw = W * s, lh = H * s;
  const ov = v.overview?.p === v.p ? v.overview : null;
  const covers = L && lx <= 0 && ly <= 0 && lx + lw >= W && ly + lh >= H;
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  if (ov && (!covers || L.t.k < ov.k)) {
    const q = t.k / ov.k; // overview pixel -> screen pixel
    ctx.drawImage(ov.canvas, dpr * (t.x - q * ov.x), dpr * (t.y - q * ov.y),
      dpr * q * ov.canvas.width, dpr * q * ov.canvas.height);
  }
  if (L && (!ov || L.t.k >= ov.k)) {
    ctx.fillStyle = v.colors.background;
    ctx.fillRect(dpr * lx, dpr * ly, dpr * lw, dpr * lh);
    ctx.imageSmoothingEnabled = false; // a third of the raster's time; the next still frame is sharp
    ctx.drawImage(L.canvas, dpr * lx, dpr * ly, dpr * lw, dpr * lh);
  }
  ctx.restore();
  v.root.dataset.bitmap = "1"; // for tests and the benches: this frame came from the bitmaps
}

const whenIdle = (f) => (window.requestIdleCallback ? requestIdleCallback(f, { timeout: 500 }) : setTimeout(f, 50));
const PLAIN = { alpha: () => 1, fill: () => null, edgeShown: () => true };

/** The whole picture once, at twice the scale that fits the view (within OVERVIEW_PX pixels). */
function drawOverview(v, p, data) {
  if (v.overview?.p === p || !v.size[0]) return;
  const [W, H] = v.size;
  const pad = 2;
  const fitK = Math.min(W / Math.max(data.width, 1), H / Math.max(data.height, 1));
  const k = Math.min(OVERVIEW_FIT * fitK, Math.sqrt(OVERVIEW_PX / Math.max(1, data.width * data.height)));
  const canvas = v.overview?.canvas || document.createElement("canvas");
  canvas.width = Math.ceil(data.width * k + 2 * pad);
  canvas.height = Math.ceil(data.height * k + 2 * pad);
  const t = { k, x: pad, y: pad, dpr: 1 };
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = v.colors.background;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  drawBase(ctx, p, data, t, [canvas.width, canvas.height], PLAIN, v.colors);
  ctx.getImageData(0, 0, 1, 1); // raster now, while idle, not in the first frame that shows it
  // overview pixel (px, py) shows world ((px - x) / k, (py - y) / k)
  v.overview = { canvas, k, x: pad, y: pad, p, colors: v.colors };
}
