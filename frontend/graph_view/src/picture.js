// A picture prepared once for drawing and pointing: the payload's parallel arrays as
// typed arrays, nodes grouped by fill, edge ends clipped to the boxes, and a grid for
// hit tests (the node under the pointer without a look at every node).

/**
 * Everything derived once per picture: typed arrays, fill groups, edge end points
 * clipped to the boxes, and a grid for hit tests.
 */
export function prepare(data) {
  const nd = data.nodes;
  const n = nd.id.length;
  const x = Float64Array.from(nd.x), y = Float64Array.from(nd.y);
  const w = Float64Array.from(nd.w), h = Float64Array.from(nd.h);
  const index = new Map();
  for (let i = 0; i < n; i++) index.set(nd.id[i], i);
  const groups = new Map(); // fill index -> node indices
  for (let i = 0; i < n; i++) {
    const f = nd.fill[i];
    if (!groups.has(f)) groups.set(f, []);
    groups.get(f).push(i);
  }
  // Texts come as indices into one table of strings (-1: none).
  const text = (field) => nd[field].map((j) => (j < 0 ? null : data.strings[j]));
  const label = text("label");
  const lines = label.map((l) => l.split("\n"));
  const ed = data.edges;
  const m = ed.src.length;
  const ex0 = new Float64Array(m), ey0 = new Float64Array(m);
  const ex1 = new Float64Array(m), ey1 = new Float64Array(m);
  for (let e = 0; e < m; e++) {
    const a = ed.src[e], b = ed.dst[e];
    const dx = x[b] - x[a], dy = y[b] - y[a];
    const [sx, sy] = clip(x[a], y[a], w[a] / 2, h[a] / 2, dx, dy);
    const [tx, ty] = clip(x[b], y[b], w[b] / 2, h[b] / 2, -dx, -dy);
    ex0[e] = sx; ey0[e] = sy; ex1[e] = tx; ey1[e] = ty;
  }
  const cell = 120;
  const grid = new Map();
  for (let i = 0; i < n; i++) {
    const c0 = Math.floor((x[i] - w[i] / 2) / cell), c1 = Math.floor((x[i] + w[i] / 2) / cell);
    const r0 = Math.floor((y[i] - h[i] / 2) / cell), r1 = Math.floor((y[i] + h[i] / 2) / cell);
    for (let c = c0; c <= c1; c++) {
      for (let r = r0; r <= r1; r++) {
        const k = c + "," + r;
        if (!grid.has(k)) grid.set(k, []);
        grid.get(k).push(i);
      }
    }
  }
  const minH = n ? Math.min(...h) : 20;
  return { n, x, y, w, h, index, groups, lines, label, op: text("op"), shape: text("shape"),
    param: text("param"), ex0, ey0, ex1, ey1, grid, cell, minH, bounds: bounds(data, x, y, w, h),
    kind: nd.kind.map((k) => data.kinds[k]), fills: data.fills };
}

/** What is drawn (boxes and block outlines), as {x0, y0, x1, y1}; no margin around it. */
function bounds(data, x, y, w, h) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let i = 0; i < x.length; i++) {
    x0 = Math.min(x0, x[i] - w[i] / 2); x1 = Math.max(x1, x[i] + w[i] / 2);
    y0 = Math.min(y0, y[i] - h[i] / 2); y1 = Math.max(y1, y[i] + h[i] / 2);
  }
  const fr = data.frames;
  for (let f = 0; f < fr.x.length; f++) {
    x0 = Math.min(x0, fr.x[f]); x1 = Math.max(x1, fr.x[f] + fr.w[f]);
    y0 = Math.min(y0, fr.y[f]); y1 = Math.max(y1, fr.y[f] + fr.h[f]);
  }
  return x0 <= x1 ? { x0, y0, x1, y1 } : { x0: 0, y0: 0, x1: data.width, y1: data.height };
}

function clip(cx, cy, hw, hh, dx, dy) {
  if (dx === 0 && dy === 0) return [cx, cy];
  const s = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return [cx + dx * s, cy + dy * s];
}

/** The node under world point (wx, wy), within `slop` world units, or -1. */
export function hit(p, wx, wy, slop) {
  const k = Math.floor(wx / p.cell) + "," + Math.floor(wy / p.cell);
  const cands = p.grid.get(k);
  if (!cands) return -1;
  let best = -1, bestD = Infinity;
  for (const i of cands) {
    const dx = Math.abs(wx - p.x[i]) - p.w[i] / 2, dy = Math.abs(wy - p.y[i]) - p.h[i] / 2;
    if (dx <= slop && dy <= slop) {
      const d = Math.max(dx, dy);
      if (d < bestD) { bestD = d; best = i; }
    }
  }
  return best;
}
