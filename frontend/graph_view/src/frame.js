// One frame of the view: the replay's playhead moves on, the picture is drawn (gliding
// from the previous one while it moves, glide.js, or A above B when comparing), and the
// view's data-* attributes say what is on screen, for tests and the benches.
//
// The view `v` holds `motion` (a glide under way, or null), what the last frame drew
// (`drawnP`, `drawnData`, `drawnT`), `draws` and `panes` (compare mode's, as drawn).

import { PAD } from "./camera.js";
import { PANE_GAP, paneRects, rings } from "./compare.js";
import { FONT_PT, LABEL_MIN_PX, drawPicture, labelPx } from "./draw.js";
import { big, drawLayered } from "./layer.js";
import { CAMERA_MS, MOTION_MS, between, cameraBetween, ease } from "./motion.js";
import { advance, updateReplayText } from "./replay_controls.js";
import { frameCount, lookAt } from "./replay.js";

const STILL = () => ({ alpha: () => 1, fill: () => null, edgeShown: () => true, current: -1, norm: null });
const NO_MARKS = () => ({ newSet: new Set(), hover: -1, selected: -1, cursor: -1, current: -1 });

/** Where a camera's glide holds still: the stage's fixed edges, else the view's middle. */
function cameraAnchor(v) {
  const [W, H] = v.size;
  if (v.cmp || !v.data.stage) return v.cmp ? [PAD, 0] : [W / 2, H / 2];
  return v.data.stage.grows === "both" ? [PAD, PAD] : [PAD, H / 2];
}

/** The frame at time `now`; another follows while the replay plays or a glide runs. */
export function drawFrame(v, now) {
  advance(v, now);
  draw(v, now);
  if (v.playing || v.motion) v.schedule();
}

function draw(v, now) {
  const started = performance.now();
  const [W, H] = v.size;
  const ctx = v.ctx;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = v.colors.background; // the canvas is opaque (view.js)
  ctx.fillRect(0, 0, v.canvas.width, v.canvas.height);
  let look = lookAt(v.rp, v.mode, v.pos, v.p, v.data);
  v.look = look;
  let p = v.p, data = v.data, cam = v.t;
  const m = v.motion;
  let gliding = false;
  if (m) {
    if (m.start === null) m.start = now;
    const elapsed = now - m.start;
    // First the nodes glide (the camera still), then the camera eases to its new place.
    gliding = !!m.plan && elapsed < MOTION_MS;
    if (m.camTo && !m.userMoved) {
      const u = ease(Math.min(1, (elapsed - m.camDelay) / CAMERA_MS));
      cam = u > 0 ? cameraBetween(m.camFrom, m.camTo, cameraAnchor(v), u) : m.camFrom;
    }
    if (gliding) {
      const u = ease(elapsed / MOTION_MS);
      ({ p, data } = between(m.plan, v.p, v.data, m.old, u));
      const base = look, born = m.plan.born;
      look = { ...base, alpha: (i) => base.alpha(i) * (born[i] ? Math.max(0.05, u) : 1) };
      if (!m.ghost.empty) {
        const fade = 1 - u;
        ctx.globalAlpha = fade;
        drawPicture(ctx, m.ghost.p, m.ghost.data, { k: cam.k, x: cam.x, y: cam.y, dpr: v.dpr }, [W, H],
          { ...STILL(), alpha: () => fade }, NO_MARKS(), v.colors);
        ctx.globalAlpha = 1;
      }
    }
    m.frames += 1;
    const end = Math.max(m.plan ? MOTION_MS : 0, m.camTo ? m.camDelay + CAMERA_MS : 0);
    v.root.dataset.phase = gliding ? "glide" : "camera";
    if (elapsed >= end) {
      v.root.dataset.motionMs = elapsed.toFixed(0);
      v.root.dataset.motionFrames = String(m.frames);
      v.root.dataset.motionFps = (elapsed > 0 ? (m.frames - 1) / (elapsed / 1000) : 0).toFixed(1);
      v.root.dataset.phase = "";
      v.motion = null;
      p = v.p;
      data = v.data;
      cam = v.t;
      look = v.look;
    }
  }
  const t = { k: cam.k, x: cam.x, y: cam.y, dpr: v.dpr };
  // Comparing, B's additions are ringed against A: "new since the previous run" would repeat it.
  const marks = { newSet: v.cmp ? new Set() : v.newSet, hover: v.hover, selected: v.selected,
    cursor: v.cursor, current: look.current };
  v.root.dataset.bitmap = "0";
  if (v.cmp) drawCompare(v, ctx, t, look, marks);
  else if (!gliding && big(p, data)) drawLayered(v, p, data, t, look, marks, !!v.motion);
  else drawPicture(ctx, p, data, t, [W, H], look, marks, v.colors);
  v.drawnP = p;
  v.drawnData = data;
  v.drawnT = t;
  v.draws += 1;
  const ds = v.root.dataset;
  ds.moving = v.motion ? "1" : "0";
  ds.draws = String(v.draws);
  ds.scale = t.k.toFixed(4);
  ds.tx = t.x.toFixed(2);
  ds.ty = t.y.toFixed(2);
  ds.labels = FONT_PT * t.k >= (v.colors.labelMin ?? LABEL_MIN_PX) ? "1" : "0";
  ds.labelPx = v.cmp ? "" : labelPx(p, t.k, v.colors).toFixed(1); // the ops' text, 0: on hover only
  ds.mode = v.mode || "";
  ds.frame = String(Math.floor(v.pos));
  ds.frames = v.rp && v.mode ? String(frameCount(v.rp, v.mode)) : "0";
  ds.playing = v.playing ? "1" : "0";
  updateReplayText(v);
  // For tests and bench/bench_browser.py: which picture is on screen, and when it was drawn.
  ds.drawnGraph = v.data.graph;
  ds.drawnAt = performance.now().toFixed(1);
  ds.drawMs = (ds.drawnAt - started).toFixed(1);
}

/** Both runs, A above B, one camera; B's additions and A's losses ringed in their colours. */
function drawCompare(v, ctx, t, look, marks) {
  const [W, H] = v.size;
  const panes = paneRects(W, H);
  v.panes = panes;
  const c = v.cmp, colors = v.colors, dpr = v.dpr;
  const idA = (i) => c.pa.index.get(v.data.nodes.id[i]) ?? -1;
  const marksA = { ...NO_MARKS(), hover: marks.hover >= 0 ? idA(marks.hover) : -1,
    selected: marks.selected >= 0 ? idA(marks.selected) : -1 };
  const sides = [
    [c.pa, c.data, STILL(), marksA, c.removed, colors.removed],
    [v.p, v.data, look, marks, c.added, colors.added],
  ];
  sides.forEach(([p, data, lk, mk, ringed, color], j) => {
    const r = panes[j];
    const pt = { k: t.k, x: t.x + r.x, y: t.y + r.y, dpr };
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.beginPath();
    ctx.rect(r.x * dpr, r.y * dpr, r.w * dpr, r.h * dpr);
    ctx.clip();
    drawPicture(ctx, p, data, pt, [r.x + r.w, r.y + r.h], lk, mk, colors);
    ctx.setTransform(dpr * pt.k, 0, 0, dpr * pt.k, dpr * pt.x, dpr * pt.y);
    rings(ctx, p, ringed, color, pt.k, 3.5, 3);
    ctx.restore();
    v.paneLabels[j].style.top = `${r.y + 2}px`;
  });
  ctx.save();
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = colors.border;
  ctx.fillRect(0, panes[1].y - PANE_GAP / 2, W, 1);
  ctx.restore();
}
