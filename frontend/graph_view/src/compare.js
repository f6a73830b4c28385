// Compare mode: run A (pinned) and run B (on screen) in two panes of one canvas, one
// above the other so that the same time step sits at the same x in both. One camera
// moves both (synced pan and zoom); nodes are matched by id, as graph_diff matches them.

export const PANE_GAP = 10; // px between the panes

/** The two panes' rectangles in the canvas box: [A, B], each {x, y, w, h} in px. */
export function paneRects(W, H) {
  const h = Math.max(40, Math.floor((H - PANE_GAP) / 2));
  return [{ x: 0, y: 0, w: W, h }, { x: 0, y: h + PANE_GAP, w: W, h: H - h - PANE_GAP }];
}

/**
 * One camera that shows both pictures whole in their panes, left-aligned, under each
 * pane's caption (``labelH`` px tall, as drawn: presenter mode makes it taller).
 */
export function compareFit(W, H, a, b, pad, labelH) {
  const [pane] = paneRects(W, H);
  const w = Math.max(a.width, b.width, 1), h = Math.max(a.height, b.height, 1);
  const k = Math.min((pane.w - 2 * pad) / w, (pane.h - labelH - pad) / h, 2);
  return { k, x: pad, y: labelH };
}

/** The pane a canvas point (px) falls in: 0 (A), 1 (B) or -1 (the gap). */
export function paneAt(panes, y) {
  return panes.findIndex((r) => y >= r.y && y < r.y + r.h);
}

/** Rings around boxes `idx` of picture `p`, in world units (the canvas is already transformed). */
export function rings(ctx, p, idx, color, k, width = 3, gap = 3) {
  if (!idx.length) return;
  const px = 1 / k, g = gap * px;
  ctx.beginPath();
  for (const i of idx) ctx.rect(p.x[i] - p.w[i] / 2 - g, p.y[i] - p.h[i] / 2 - g, p.w[i] + 2 * g, p.h[i] + 2 * g);
  ctx.strokeStyle = color;
  ctx.lineWidth = width * px;
  ctx.stroke();
}
