// The replay's controls and words: Record and Backward, play, pause, step, the scrubber
// and the speed, the status line over the graph, and torch's error where Backward ends.
//
// The view `v` holds `rp` (the replay, replay.js), `mode` ("forward", "backward" or
// null), `pos` (the playhead, in frames), `playing`, `lastTick` and the bar's elements.

import { button, el, fmtNorm } from "./dom.js";
import { frameCount } from "./replay.js";
import { buildCode, showLine, showSide } from "./side.js";

const SPEEDS = [1, 2, 5, 10, 25, 100, 500]; // frames a second

/** The replay's group of the toolbar (hidden until the payload carries a trace). */
export function buildReplayBar(v) {
  const bar = el("span", { class: "gv-replay", role: "group", "aria-label": "Replay this run" });
  v.scrub = el("input", { type: "range", min: "0", max: "0", step: "1", value: "0",
    class: "gv-scrub", "aria-label": "Replay position" });
  v.speed = el("select", { class: "gv-speed", "aria-label": "Replay speed" });
  for (const s of SPEEDS) v.speed.append(el("option", { value: String(s) }, `${s} /s`));
  v.modeButtons = {
    forward: button("forward", "● Record", "Record: replay the forward pass, nodes appearing as autograd recorded them"),
    backward: button("backward", "◀ Backward", "Backward: replay backward() in the engine's real order, coloured by gradient norm"),
  };
  v.playButton = button("play", "▶ Play", "Play or pause (Space)");
  bar.append(
    v.modeButtons.forward,
    v.modeButtons.backward,
    button("prev", "|◀", "Step back (key ,)"),
    v.playButton,
    button("next", "▶|", "Step forward (key .)"),
    v.scrub, v.speed,
  );
  v.scrub.oninput = () => {
    pause(v);
    v.pos = Number(v.scrub.value);
    v.schedule();
  };
  v.speed.onchange = () => v.canvas.focus({ preventScroll: true });
  return bar;
}

/** A replay button (data-act): Record, Backward, play/pause, step back or forward. */
export function replayAct(v, a) {
  if (!v.rp) return;
  if (a === "forward" || a === "backward") start(v, a);
  else if (a === "play") {
    if (!v.mode) start(v, "forward");
    else if (v.playing) pause(v);
    else play(v);
  } else if (a === "prev" || a === "next") {
    if (!v.mode) {
      v.mode = "forward";
      buildCode(v);
    }
    pause(v);
    const n = frameCount(v.rp, v.mode);
    v.pos = a === "next" ? Math.min(n, Math.floor(v.pos) + 1) : Math.max(0, Math.ceil(v.pos) - 1);
    updateControls(v);
    v.schedule();
  }
}

/** Play `mode` from its start, in about eight seconds whatever the size (5 frames a second at least). */
function start(v, mode) {
  v.mode = mode;
  v.change.hidden = true;
  v.pos = 0;
  const n = frameCount(v.rp, mode);
  const want = Math.max(5, n / 8);
  v.speed.value = String(SPEEDS.find((s) => s >= want) || SPEEDS[SPEEDS.length - 1]);
  buildCode(v);
  play(v);
}

function play(v) {
  const n = frameCount(v.rp, v.mode);
  if (v.pos >= n) v.pos = 0;
  v.playing = true;
  v.lastTick = 0;
  updateControls(v);
  v.schedule();
}

export function pause(v) {
  if (!v.playing) return;
  v.playing = false;
  updateControls(v);
}

/** A new trace (or none): the replay starts over, stopped. */
export function resetReplay(v, rp) {
  pause(v);
  v.rp = rp;
  v.mode = null;
  v.pos = 0;
  buildCode(v);
}

/** While playing, the playhead moves on by the time since the last frame, at the chosen speed. */
export function advance(v, now) {
  if (!v.playing) return;
  const dt = v.lastTick ? (now - v.lastTick) / 1000 : 0;
  v.lastTick = now;
  const n = frameCount(v.rp, v.mode);
  v.pos = Math.min(n, v.pos + dt * Number(v.speed.value));
  if (v.pos >= n) pause(v);
  v.scrub.value = String(Math.floor(v.pos));
}

/** The buttons' pressed states and the scrubber, as the replay stands. */
export function updateControls(v) {
  v.playButton.textContent = v.playing ? "Pause" : "▶ Play";
  v.playButton.setAttribute("aria-pressed", v.playing ? "true" : "false");
  for (const m of ["forward", "backward"]) {
    v.modeButtons[m].setAttribute("aria-pressed", v.mode === m ? "true" : "false");
  }
  if (v.rp) {
    v.scrub.max = String(v.mode ? frameCount(v.rp, v.mode) : 0);
    v.scrub.value = String(Math.floor(v.pos));
  }
  v.root.dataset.playing = v.playing ? "1" : "0";
}

/** The status line, the side panel's heading and code line, and Backward's ending, at the playhead. */
export function updateReplayText(v) {
  if (!v.rp || !v.mode) {
    v.status.textContent = "";
    v.root.dataset.status = "";
    return;
  }
  const tr = v.rp.tr, nd = v.data.nodes;
  const n = frameCount(v.rp, v.mode);
  const done = Math.ceil(v.pos) - 1;
  let text;
  let line = -1;
  let step = null;
  const words = tr.status || {};
  const fill = (template, k, fallback) => (template ? template.replace("{done}", String(k)) : fallback);
  if (v.mode === "forward") {
    const k = Math.max(0, done + 1);
    text = fill(words.forward, k, `Record (forward): ${k} of ${n} nodes created`);
    if (k >= n && words.forward_end) text += ` · ${words.forward_end}`;
    if (done >= 0) {
      text += ` · ${nd.id[tr.forward[done]]}`;
      line = tr.forward_line[done];
      step = tr.forward_step[done];
      if (step !== null && step >= 0) text += ` · loop step t = ${step}`;
    }
    v.sideHead.textContent = step !== null && step >= 0
      ? `forward(): the loop at step t = ${step}` : "forward(): the line running now";
  } else {
    const B = tr.backward.length;
    const k = Math.min(Math.max(0, done + 1), B);
    text = fill(words.backward, k, `Backward of ${tr.root}: ${k} of ${B} nodes run`);
    if (done >= 0 && done < B) {
      text += ` · ${nd.id[tr.backward[done]]} · ‖grad‖ ${fmtNorm(tr.backward_norm[done])}`;
      line = tr.source[tr.backward[done]]; // the forward line whose op is being undone
    } else if (done >= B) {
      text += ` · ${words.backward_end || "parameters hold their .grad"}`;
    }
    v.sideHead.textContent = `backward() of ${tr.root}: the line that made the node it runs now`;
    // The punchline, read whole: torch's own error, across the graph, not in the side panel.
    const freed = done >= B + 1;
    v.ending.hidden = !freed;
    v.root.dataset.ending = freed ? "1" : "0";
    if (freed) {
      v.endingText.textContent = tr.error;
      text += " · graph freed";
    }
  }
  showSide(v);
  v.status.textContent = text;
  v.root.dataset.status = text;
  showLine(v, line);
}
