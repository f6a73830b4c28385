// A motion starts on the view: the nodes glide from the picture drawn to the new one, or
// the camera eases to a new fit (camera.js). frame.js draws each frame of it.
//
// The view `v` holds `motion` (a glide under way, or null) and what the last frame drew
// (`drawnT`).

import { MOTION_MS, ghosts, plan } from "./motion.js";

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

/** Whether the view animates its changes (not for a learner who asked for reduced motion). */
export function moves() {
  return !reducedMotion?.matches;
}

/**
 * A glide from the picture drawn `before` ({p, data}) to the view's new one. `prev` is the
 * transition it interrupts: a camera already easing goes on at once, one still waiting keeps
 * its time, so that while pictures come faster than a glide (a drag of T) the camera follows.
 */
export function glide(v, before, prev = null) {
  const pl = plan(before.p, before.data, v.p, v.data);
  let camDelay = MOTION_MS;
  if (prev?.camTo) {
    const elapsed = prev.start === null ? 0 : performance.now() - prev.start;
    camDelay = Math.max(0, Math.min(MOTION_MS, prev.camDelay - elapsed));
  }
  begin(v, { plan: pl, ghost: ghosts(pl, before.p, before.data), old: before.data,
    start: null, frames: 0, camFrom: drawnCamera(v), camTo: null, camDelay });
}

/**
 * A motion starts: `data-moving` says so at once, not from its first frame on, so that a
 * reader who sees the new picture's attributes (set when it comes, drawn at the next frame)
 * and `data-moving="0"` knows the frame on screen is the still, final one.
 */
function begin(v, motion) {
  v.motion = motion;
  v.root.dataset.moving = "1";
}

/** The camera of the last frame drawn (the one the learner sees), as {k, x, y}. */
function drawnCamera(v) {
  const t = v.drawnT || v.t;
  return { k: t.k, x: t.x, y: t.y };
}

/**
 * The camera eases from the one drawn to `to` (camera.js's fit): after the glide of a new
 * picture's nodes, else at once. Nothing moves under reduced motion, or from a frame drawn
 * before the view had a size (its scale was not a scale).
 */
export function easeCamera(v, to) {
  let m = v.motion;
  if (m && !m.plan) { // a camera's own glide given a new end: from where it is
    m = v.motion = null;
    v.schedule(); // a frame says it stopped, if no new glide starts
  }
  const from = m ? m.camFrom : v.drawnT;
  const same = !(from?.k > 0) || (Math.abs(from.k - to.k) < 1e-6 * to.k && Math.abs(from.x - to.x) < 0.05
    && Math.abs(from.y - to.y) < 0.05);
  if (m) {
    m.camTo = same ? null : to;
    return;
  }
  if (same || !moves()) return;
  begin(v, { plan: null, start: null, frames: 0, camFrom: drawnCamera(v), camTo: to, camDelay: 0 });
  v.schedule();
}
