// Drawing one picture on a 2D canvas, in the server's coordinates (points, y down).
//
// A zoom frame must stay fast at ten thousand nodes, so everything is a few batched
// canvas paths: boxes grouped by fill colour, edges grouped by kind, labels only
// where they are readable, and only what lies inside the viewport.

export const LABEL_MIN_PX = 6; // screen font size below which labels are skipped
// Presenting (colors.labelMin), no text under this: from the back row smaller text is noise,
// and a box reads by its colour and shape, its op on hover.
export const PRESENT_LABEL_PX = 12;
export const FONT_PT = 11; // label font, in points at scale 1
const SHORT_MIN_BOX_PX = 9; // below this box height on screen, no text at all
const SHORT_MAX_PX = 9; // the op alone, sized to its box: at most this many px...
const SHORT_SHARE = 0.55; // ...and this share of the box's height (as poster.py draws it)...
const PRESENT_SHARE = 0.6; // ...or, presenting, this: a 20 px box holds 12 px text
const FRAME_FONT_PT = 11;
const ARROW_PT = 6;
// Level of detail, for pictures of tens of thousands of nodes zoomed out:
const FRAME_MIN_PX = 6; // a block outline smaller than this on screen is not drawn
const DOT_PX = 2; // a box smaller than this on screen is one whole pixel, drawn once per pixel

// Colour-blind safe sequential scale for gradient norms (viridis, 9 stops).
const VIRIDIS = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962",
  "#addc30", "#fde725"];

export function viridis(t) {
  const x = Math.max(0, Math.min(1, t)) * (VIRIDIS.length - 1);
  return VIRIDIS[Math.round(x)];
}

export const GRADIENT_STOPS = VIRIDIS;

/** Dark fills get white text. */
export function textOn(hex) {
  const n = parseInt(hex.slice(1), 16);
  const r = (n >> 16) & 255, g = (n >> 8) & 255, b = n & 255;
  return 0.299 * r + 0.587 * g + 0.114 * b < 140 ? "#FFFFFF" : "#1A1A1A";
}

/**
 * Boxes too small to see as boxes, as whole device pixels, each pixel drawn once per colour:
 * at a whole graph of 50,000 nodes many boxes share a pixel.
 */
class Dots {
  constructor(ctx, t, size) {
    this.ctx = ctx;
    this.t = t;
    this.w = Math.ceil(size[0] * t.dpr);
    this.h = Math.ceil(size[1] * t.dpr);
    this.seen = null;
    this.stamp = 0;
  }

  start() {
    this.stamp += 1;
    this.path = null;
  }

  add(wx, wy) {
    const t = this.t;
    const ix = Math.floor((wx * t.k + t.x) * t.dpr), iy = Math.floor((wy * t.k + t.y) * t.dpr);
    if (ix < 0 || iy < 0 || ix >= this.w || iy >= this.h) return;
    this.seen ||= new Uint16Array(this.w * this.h);
    const at = iy * this.w + ix;
    if (this.seen[at] === this.stamp) return;
    this.seen[at] = this.stamp;
    this.path ||= new Path2D();
    this.path.rect(ix, iy, 1, 1);
  }

  /** The pixels added since start(), in the context's fill colour. */
  fill() {
    if (!this.path) return;
    this.ctx.save();
    this.ctx.setTransform(1, 0, 0, 1, 0, 0);
    this.ctx.fill(this.path);
    this.ctx.restore();
  }
}

/**
 * The height in screen px of the op labels drawn at scale k (0: none): every line at FONT_PT
 * once readable, else the op alone sized to the smallest box, never under `colors.labelMin`.
 */
export function labelPx(p, k, colors) {
  const min = colors.labelMin ?? LABEL_MIN_PX;
  if (FONT_PT * k >= min) return FONT_PT * k;
  if (p.minH * k < SHORT_MIN_BOX_PX) return 0;
  const share = colors.labelMin ? PRESENT_SHARE : SHORT_SHARE;
  const px = Math.min(p.minH * k * share, Math.max(SHORT_MAX_PX, colors.labelMin ?? 0));
  return px >= (colors.labelMin ?? 0) ? px : 0;
}

/**
 * Draw the picture. `look` says how each node is shown right now:
 *   look.alpha(i)  -> 0..1 (replay: not yet created nodes are ghosts)
 *   look.fill(i)   -> colour override or null
 *   look.edgeShown(e) -> bool
 * `marks` are rings over it (drawMarks). Returns the number of boxes in view.
 */
export function drawPicture(ctx, p, data, t, size, look, marks, colors) {
  const shown = drawBase(ctx, p, data, t, size, look, colors);
  drawMarks(ctx, p, t, size, look, marks, colors);
  return shown;
}

/** The picture without the marks: frames, edges, boxes and labels. */
export function drawBase(ctx, p, data, t, size, look, colors) {
  const { k } = t;
  const [W, H] = size;
  const x0 = -t.x / k, y0 = -t.y / k, x1 = (W - t.x) / k, y1 = (H - t.y) / k;
  const px = 1 / k; // one screen pixel in world units
  ctx.save();
  ctx.setTransform(t.dpr * k, 0, 0, t.dpr * k, t.dpr * t.x, t.dpr * t.y);
  const textPx = labelPx(p, k, colors);
  const labels = FONT_PT * k >= (colors.labelMin ?? LABEL_MIN_PX); // every line, else the op alone

  // Frames: dashed outlines of the blocks (time steps).
  const fr = data.frames;
  ctx.lineWidth = px;
  ctx.strokeStyle = colors.muted;
  ctx.setLineDash([4 * px, 3 * px]);
  ctx.beginPath();
  const frameMin = FRAME_MIN_PX * px;
  for (let f = 0; f < fr.x.length; f++) {
    if (fr.x[f] > x1 || fr.y[f] > y1 || fr.x[f] + fr.w[f] < x0 || fr.y[f] + fr.h[f] < y0) continue;
    if (fr.w[f] < frameMin || fr.h[f] < frameMin) continue;
    ctx.rect(fr.x[f], fr.y[f], fr.w[f], fr.h[f]);
  }
  ctx.stroke();
  ctx.setLineDash([]);
  if (labels) {
    ctx.fillStyle = colors.muted;
    ctx.font = `${FRAME_FONT_PT}px ${colors.font}`;
    ctx.textBaseline = "top";
    ctx.textAlign = "left";
    for (let f = 0; f < fr.x.length; f++) {
      if (!fr.label[f] || fr.x[f] > x1 || fr.y[f] > y1 || fr.x[f] + fr.w[f] < x0 || fr.y[f] + fr.h[f] < y0) continue;
      ctx.fillText(fr.label[f], fr.x[f] + 4, fr.y[f] + 3, fr.w[f] - 8);
    }
  }

  // Edges: one path per kind (plain, recurrent), arrow heads when big enough to see.
  const ed = data.edges;
  const arrows = ARROW_PT * k >= 3;
  for (const recurrent of [0, 1]) {
    ctx.beginPath();
    const heads = [];
    for (let e = 0; e < ed.src.length; e++) {
      if (ed.recurrent[e] !== recurrent || !look.edgeShown(e)) continue;
      const ax = p.ex0[e], ay = p.ey0[e], bx = p.ex1[e], by = p.ey1[e];
      if (Math.max(ax, bx) < x0 || Math.min(ax, bx) > x1 || Math.max(ay, by) < y0 || Math.min(ay, by) > y1) continue;
      if (Math.abs(bx - ax) + Math.abs(by - ay) < px) continue; // under a pixel: the boxes cover it
      ctx.moveTo(ax, ay);
      ctx.lineTo(bx, by);
      if (arrows) heads.push(e);
    }
    ctx.strokeStyle = recurrent ? colors.recurrent : colors.edge;
    ctx.lineWidth = (recurrent ? 1.6 : 1) * px;
    ctx.stroke();
    if (heads.length) {
      ctx.beginPath();
      for (const e of heads) {
        const ax = p.ex0[e], ay = p.ey0[e], bx = p.ex1[e], by = p.ey1[e];
        const len = Math.hypot(bx - ax, by - ay) || 1;
        const ux = (bx - ax) / len, uy = (by - ay) / len;
        const s = Math.min(ARROW_PT, len / 3);
        ctx.moveTo(bx, by);
        ctx.lineTo(bx - ux * s - uy * s * 0.45, by - uy * s + ux * s * 0.45);
        ctx.lineTo(bx - ux * s + uy * s * 0.45, by - uy * s - ux * s * 0.45);
        ctx.closePath();
      }
      ctx.fillStyle = recurrent ? colors.recurrent : colors.edge;
      ctx.fill();
    }
  }

  // Boxes, batched by fill; replay overrides and ghosts drawn after.
  const visible = [];
  for (let i = 0; i < p.n; i++) {
    const hw = p.w[i] / 2, hh = p.h[i] / 2;
    if (p.x[i] + hw < x0 || p.x[i] - hw > x1 || p.y[i] + hh < y0 || p.y[i] - hh > y1) continue;
    visible.push(i);
  }
  const special = [];
  const byFill = new Map();
  for (const i of visible) {
    const a = look.alpha(i);
    const over = look.fill(i);
    const kind = p.kind[i];
    if (a < 1 || over || kind === "fold" || kind === "loop") { special.push(i); continue; }
    const f = data.nodes.fill[i];
    if (!byFill.has(f)) byFill.set(f, []);
    byFill.get(f).push(i);
  }
  const strokes = p.minH * k >= 4;
  const dots = new Dots(ctx, t, size);
  for (const [f, idx] of byFill) {
    ctx.beginPath();
    dots.start();
    for (const i of idx) {
      if (p.w[i] * k < DOT_PX && p.h[i] * k < DOT_PX) dots.add(p.x[i], p.y[i]);
      else ctx.rect(p.x[i] - p.w[i] / 2, p.y[i] - p.h[i] / 2, p.w[i], p.h[i]);
    }
    ctx.fillStyle = p.fills[f];
    ctx.fill();
    dots.fill();
    if (strokes) {
      ctx.strokeStyle = colors.border;
      ctx.lineWidth = px;
      ctx.stroke();
    }
  }
  // Data and weights get a heavier frame than ops.
  if (strokes) {
    ctx.beginPath();
    for (const idx of byFill.values()) {
      for (const i of idx) {
        const kind = p.kind[i];
        if (kind === "input" || kind === "output" || kind === "parameter") {
          ctx.rect(p.x[i] - p.w[i] / 2, p.y[i] - p.h[i] / 2, p.w[i], p.h[i]);
        }
      }
    }
    ctx.strokeStyle = colors.border;
    ctx.lineWidth = 2 * px;
    ctx.stroke();
  }
  for (const i of special) {
    const a = look.alpha(i);
    const kind = p.kind[i];
    ctx.globalAlpha = a;
    const bx = p.x[i] - p.w[i] / 2, by = p.y[i] - p.h[i] / 2;
    if (kind === "fold" || kind === "loop") {
      ctx.fillStyle = colors.background;
      ctx.fillRect(bx, by, p.w[i], p.h[i]);
      ctx.setLineDash([4 * px, 3 * px]);
      ctx.strokeStyle = kind === "loop" ? colors.recurrent : colors.muted;
      ctx.lineWidth = 1.4 * px;
      ctx.strokeRect(bx, by, p.w[i], p.h[i]);
      ctx.setLineDash([]);
    } else {
      ctx.fillStyle = look.fill(i) || p.fills[data.nodes.fill[i]];
      ctx.fillRect(bx, by, p.w[i], p.h[i]);
      if (strokes) {
        ctx.strokeStyle = colors.border;
        ctx.lineWidth = px;
        ctx.strokeRect(bx, by, p.w[i], p.h[i]);
      }
    }
  }
  ctx.globalAlpha = 1;

  // Labels, only where readable: every line once the font is big enough, else the
  // first line (the op) alone, sized to the box, while boxes are >= 9 px tall.
  if (textPx > 0 && !labels) {
    ctx.font = `${textPx / k}px ${colors.font}`; // in world units
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (const i of visible) {
      const a = look.alpha(i);
      if (a < 0.3) continue;
      ctx.globalAlpha = a;
      const over = look.fill(i);
      const kind = p.kind[i];
      ctx.fillStyle = kind === "fold" || kind === "loop" ? colors.muted
        : textOn(over || p.fills[data.nodes.fill[i]]);
      ctx.fillText(p.lines[i][0], p.x[i], p.y[i], p.w[i] - 2);
    }
    ctx.globalAlpha = 1;
  }
  if (labels) {
    ctx.font = `${FONT_PT}px ${colors.font}`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    const lh = FONT_PT * 1.2;
    for (const i of visible) {
      const a = look.alpha(i);
      if (a < 0.3) continue; // Record's ghosts stay blank: those nodes do not exist yet
      ctx.globalAlpha = a;
      const lines = p.lines[i];
      const over = look.fill(i);
      const kind = p.kind[i];
      ctx.fillStyle = kind === "fold" || kind === "loop" ? colors.muted
        : textOn(over || p.fills[data.nodes.fill[i]]);
      const top = p.y[i] - ((lines.length - 1) * lh) / 2;
      for (let l = 0; l < lines.length; l++) {
        ctx.fillText(lines[l], p.x[i], top + l * lh, p.w[i] - 4);
      }
    }
    ctx.globalAlpha = 1;
  }
  ctx.restore();
  return visible.length;
}

/** Rings over the picture: new since the previous run, the replay's current node, hover, selection. */
export function drawMarks(ctx, p, t, size, look, marks, colors) {
  const { k } = t;
  const [W, H] = size;
  const x0 = -t.x / k, y0 = -t.y / k, x1 = (W - t.x) / k, y1 = (H - t.y) / k;
  const px = 1 / k;
  ctx.save();
  ctx.setTransform(t.dpr * k, 0, 0, t.dpr * k, t.dpr * t.x, t.dpr * t.y);
  const ring = (i, color, width, gap) => {
    const g = gap * px;
    ctx.strokeStyle = color;
    ctx.lineWidth = width * px;
    ctx.strokeRect(p.x[i] - p.w[i] / 2 - g, p.y[i] - p.h[i] / 2 - g, p.w[i] + 2 * g, p.h[i] + 2 * g);
  };
  if (marks.newSet.size) {
    ctx.beginPath();
    for (const i of marks.newSet) {
      const hw = p.w[i] / 2, hh = p.h[i] / 2;
      if (p.x[i] + hw < x0 || p.x[i] - hw > x1 || p.y[i] + hh < y0 || p.y[i] - hh > y1) continue;
      if (look.alpha(i) < 1) continue;
      const g = 2.5 * px;
      ctx.rect(p.x[i] - hw - g, p.y[i] - hh - g, p.w[i] + 2 * g, p.h[i] + 2 * g);
    }
    ctx.strokeStyle = colors.newMark;
    ctx.lineWidth = 2.5 * px;
    ctx.stroke();
  }
  if (marks.current >= 0) ring(marks.current, colors.current, 3, 3);
  if (marks.cursor >= 0) ring(marks.cursor, colors.text, 2, 5);
  if (marks.hover >= 0 && marks.hover !== marks.selected) ring(marks.hover, colors.text, 1.5, 2);
  if (marks.selected >= 0) ring(marks.selected, colors.selected, 3.5, 4);
  ctx.restore();
}
