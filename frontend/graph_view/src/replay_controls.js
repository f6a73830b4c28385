// The replay's controls and words: Record and Backward, play, pause, step, the scrubber
// and the speed, the status line over the graph, and torch's error where Backward ends.
//
// The view `v` holds `rp` (the replay, replay.js), `mode` ("forward", "backward" or
// null), `pos` (the playhead, in frames), `playing`, `lastTick` and the bar's elements.

import { button, el } from "./dom.js";
import { frameCount } from "./replay.js";
import { buildCode, showLine, showSide } from "./side.js";

const SPEEDS = [1, 2, 5, 10, 25, 100, 500]; // frames a second

/** The replay's group of the toolbar (hidden until the payload carries a trace). */
export function buildReplayBar(v) {
  const bar = el("span", { class: "gv-replay", role: "group", "data-say-aria": "replay_run" });
  v.scrub = el("input", { type: "range", min: "0", max: "0", step: "1", value: "0",
    class: "gv-scrub", "data-say-aria": "replay_position" });
  v.speed = el("select", { class: "gv-speed", "data-say-aria": "replay_speed" });
  v.modeButtons = {
    forward: button("forward", { text: "record", label: "record_help" }),
    backward: button("backward", { text: "backward", label: "backward_help" }),
  };
  v.playButton = button("play", { label: "play_help" });
  bar.append(
    v.modeButtons.forward,
    v.modeButtons.backward,
    button("prev", { symbol: "|◀", label: "step_back" }),
    v.playButton,
    button("next", { symbol: "▶|", label: "step_forward" }),
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

/** The speeds offered, written in the payload's language (its words came with it). */
export function sayReplay(v) {
  const chosen = v.speed.value;
  v.speed.replaceChildren(...SPEEDS.map((s) => el("option", { value: String(s) },
    v.words.say("per_second", { n: s }))));
  if (chosen) v.speed.value = chosen;
  updateControls(v);
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
  v.playButton.textContent = v.playing ? v.words.say("pause") : v.words.say("play");
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
  const { text, line } = v.mode === "forward" ? forwardText(v) : backwardText(v);
  showSide(v);
  v.status.textContent = text;
  v.root.dataset.status = text;
  showLine(v, line);
}

/** Record's status line and code line at the playhead; the side panel's heading. */
function forwardText(v) {
  const tr = v.rp.tr, w = v.words, said = tr.status;
  const n = frameCount(v.rp, v.mode);
  const done = Math.ceil(v.pos) - 1;
  const k = Math.max(0, done + 1);
  const parts = [w.fill(said.forward, { done: k })];
  if (k >= n) parts.push(said.forward_end);
  let line = -1, step = null;
  if (done >= 0) {
    parts.push(v.data.nodes.id[tr.forward[done]]);
    line = tr.forward_line[done];
    step = tr.forward_step[done];
    if (step !== null && step >= 0) parts.push(w.say("loop_step", { step }));
  }
  v.sideHead.textContent = step !== null && step >= 0
    ? w.say("forward_at_step", { step }) : w.say("forward_line_now");
  return { text: parts.join(" · "), line };
}

/** Backward's status line and code line at the playhead, and its ending: torch's own error. */
function backwardText(v) {
  const tr = v.rp.tr, w = v.words, said = tr.status;
  const B = tr.backward.length;
  const done = Math.ceil(v.pos) - 1;
  const k = Math.min(Math.max(0, done + 1), B);
  const parts = [w.fill(said.backward, { done: k })];
  let line = -1;
  if (done >= 0 && done < B) {
    parts.push(v.data.nodes.id[tr.backward[done]], w.say("grad_norm", { norm: w.norm(tr.backward_norm[done]) }));
    line = tr.source[tr.backward[done]]; // the forward line whose op is being undone
  } else if (done >= B) {
    parts.push(said.backward_end);
  }
  v.sideHead.textContent = w.say("backward_line_now", { root: tr.root });
  // The punchline, read whole: torch's own error, across the graph, not in the side panel.
  const freed = done >= B + 1;
  v.ending.hidden = !freed;
  v.root.dataset.ending = freed ? "1" : "0";
  if (freed) {
    v.endingText.textContent = tr.error;
    parts.push(w.say("graph_freed"));
  }
  return { text: parts.join(" · "), line };
}
