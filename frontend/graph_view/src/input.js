// Pointer and keys on the graph: hover shows a node's tooltip, a click selects it (the
// value sent back), and the keys zoom, pan, walk between nodes and drive the replay.
// Wheel, pinch and drag are d3-zoom's (camera.js).
//
// The view `v` holds `hover` and `cursor` (node indices, or -1) and `selected`.

import { ZOOM_STEP, ensureVisible, fit, panBy, zoomBy } from "./camera.js";
import { paneAt } from "./compare.js";
import { hit } from "./picture.js";
import { LINE_EVENT, STATE } from "./protocol.js";
import { showSelected } from "./side.js";
import { act } from "./toolbar.js";
import { lineOf, showTip } from "./tooltip.js";

const KEY_PAN_PX = 80;

/** Hover, click and keys on the view's canvas. */
export function listen(v) {
  v.canvas.onpointermove = (ev) => {
    if (!ev.buttons) setHover(v, pick(v, ev), ev);
  };
  v.canvas.onpointerleave = () => setHover(v, -1);
  v.canvas.onclick = (ev) => onClick(v, ev);
  v.canvas.onkeydown = (ev) => onKey(v, ev);
}

/** The node of run B under the pointer (in compare mode, A's pane names B's node of that id). */
function pick(v, ev) {
  const r = v.canvas.getBoundingClientRect();
  let px = ev.clientX - r.left, py = ev.clientY - r.top;
  let p = v.p, inA = false;
  if (v.cmp && v.panes) {
    const j = paneAt(v.panes, py);
    if (j < 0) return -1;
    px -= v.panes[j].x;
    py -= v.panes[j].y;
    inA = j === 0;
    if (inA) p = v.cmp.pa;
  }
  const [wx, wy] = v.t.invert([px, py]);
  const slop = (ev.pointerType === "touch" || ev.sourceCapabilities?.firesTouchEvents ? 10 : 3) / v.t.k;
  const i = hit(p, wx, wy, slop);
  if (!inA || i < 0) return i;
  return v.p.index.get(v.cmp.data.nodes.id[i]) ?? -1; // a node B lacks: nothing to select
}

function setHover(v, i, ev) {
  if (i !== v.hover) {
    v.hover = i;
    v.root.dataset.hover = i >= 0 ? v.data.nodes.id[i] : "";
    v.canvas.style.cursor = i >= 0 && v.data.folds?.node?.includes(i) ? "pointer" : "";
    v.schedule();
    const L = i >= 0 ? lineOf(v, i) : null;
    window.dispatchEvent(new CustomEvent(LINE_EVENT, { detail: L && { file: L.file, line: L.line } }));
  }
  if (i >= 0) showTip(v, i, ev);
  else if (v.cursor < 0) v.tip.hidden = true;
}

function onClick(v, ev) {
  const i = pick(v, ev);
  if (i >= 0 && unroll(v, i)) return;
  if (i >= 0) {
    setHover(v, i, ev);
    select(v, i);
  } else if (v.selected >= 0) {
    select(v, -1);
  }
}

/** Box `i` is a fold (a rolled run of iterations): ask for it unrolled, with those already
 *  unrolled. -> whether it was one. The host lays the run out again (render/payload.py). */
function unroll(v, i) {
  const folds = v.data.folds;
  if (v.cmp || !folds?.node?.includes(i)) return false;
  v.setStateValue(STATE.unroll, [...(folds.unrolled ?? []), v.data.nodes.id[i]]);
  return true;
}

/** Select node `i` (-1: none): shown here, and its id sent back as the view's state. */
function select(v, i) {
  v.selected = i;
  const id = i >= 0 ? v.data.nodes.id[i] : null;
  v.root.dataset.selected = id || "";
  showSelected(v);
  v.schedule();
  v.setStateValue(STATE.selected, id);
}

function onKey(v, ev) {
  const k = ev.key;
  let handled = true;
  if (ev.shiftKey && k.startsWith("Arrow")) moveCursor(v, k);
  else if (k === "+" || k === "=") zoomBy(v, ZOOM_STEP);
  else if (k === "-" || k === "_") zoomBy(v, 1 / ZOOM_STEP);
  else if (k === "0") fit(v);
  else if (k === "ArrowLeft") panBy(v, KEY_PAN_PX, 0);
  else if (k === "ArrowRight") panBy(v, -KEY_PAN_PX, 0);
  else if (k === "ArrowUp") panBy(v, 0, KEY_PAN_PX);
  else if (k === "ArrowDown") panBy(v, 0, -KEY_PAN_PX);
  else if (k === "Enter" && v.cursor >= 0) {
    if (!unroll(v, v.cursor)) select(v, v.cursor);
  }
  else if ((k === " " || k === "Enter") && v.rp) act(v, "play");
  else if (k === "," && v.rp) act(v, "prev");
  else if (k === "." && v.rp) act(v, "next");
  else if (k === "f") act(v, "fullscreen");
  else if (k === "Escape" && v.cursor >= 0) {
    v.cursor = -1;
    v.tip.hidden = true;
    v.schedule();
  } else handled = false;
  if (handled) {
    ev.preventDefault();
    ev.stopPropagation();
  }
}

/** Shift+arrow: the nearest node in that direction (the first key picks the one in view). */
function moveCursor(v, key) {
  const p = v.p;
  const [W, H] = v.size;
  if (v.cursor < 0) {
    const [cx, cy] = v.t.invert([W / 2, H / 2]);
    let best = -1, bestD = Infinity;
    for (let i = 0; i < p.n; i++) {
      const d = Math.hypot(p.x[i] - cx, p.y[i] - cy);
      if (d < bestD) { bestD = d; best = i; }
    }
    v.cursor = best;
  } else {
    const [dx, dy] = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[key];
    const c = v.cursor;
    let best = -1, bestD = Infinity;
    for (let i = 0; i < p.n; i++) {
      if (i === c) continue;
      const vx = p.x[i] - p.x[c], vy = p.y[i] - p.y[c];
      const along = vx * dx + vy * dy;
      if (along <= 1) continue;
      const across = Math.abs(vx * dy - vy * dx);
      const d = along + 2 * across;
      if (d < bestD) { bestD = d; best = i; }
    }
    if (best >= 0) v.cursor = best;
  }
  if (v.cursor >= 0) {
    ensureVisible(v, v.cursor);
    v.root.dataset.cursor = v.data.nodes.id[v.cursor];
    showTip(v, v.cursor);
  }
  v.schedule();
}
