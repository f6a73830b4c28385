// The toolbar over the graph: fit, zoom, fullscreen; on a stage, "Replay this run",
// "Pin as A" and the keys' help; the replay's controls; a line saying what changed.
//
// The view `v` holds the bar's elements: `replayToggle`, `pinButton`, `keysButton`,
// `replayBar` and `change`.

import { resize } from "./box.js";
import { ZOOM_STEP, fit, zoomBy } from "./camera.js";
import { button, el } from "./dom.js";
import { STATE, TRIGGER } from "./protocol.js";
import { buildReplayBar, replayAct } from "./replay_controls.js";

/** The bar, its buttons dispatched by their data-act. */
export function buildToolbar(v) {
  v.change = el("div", { class: "gv-change", "aria-live": "polite" });
  v.change.hidden = true;
  const bar = el("div", { class: "gv-bar", role: "toolbar", "data-say-aria": "graph_view" });
  bar.append(
    button("fit", { text: "fit", label: "fit_help" }),
    button("zoomout", { symbol: "−", label: "zoom_out" }),
    button("zoomin", { symbol: "+", label: "zoom_in" }),
    button("fullscreen", { text: "fullscreen", label: "fullscreen_help" }),
  );
  // On a stage the view draws its own "Replay this run" toggle (Python computes the trace).
  v.replayToggle = button("replay", { text: "replay_run" });
  v.replayToggle.classList.add("gv-toggle");
  v.replayToggle.hidden = true;
  v.pinButton = button("pin");
  v.pinButton.hidden = true;
  v.keysButton = button("keys", { symbol: "?", label: "keys_help" });
  v.keysButton.setAttribute("aria-expanded", "false");
  bar.append(v.replayToggle, v.pinButton);
  v.replayBar = buildReplayBar(v);
  bar.append(v.replayBar, v.change, v.keysButton);
  bar.onclick = (ev) => {
    const b = ev.target.closest("button");
    if (b) act(v, b.dataset.act);
  };
  return bar;
}

/** What a button (or its key) does, by its data-act. */
export function act(v, a) {
  if (a === "pin") {
    v.setTriggerValue(TRIGGER.pin, v.cmp ? "unpin" : "pin");
    return;
  }
  if (a === "keys") {
    const open = v.keysButton.getAttribute("aria-expanded") !== "true";
    v.keysButton.setAttribute("aria-expanded", open ? "true" : "false");
    v.root.classList.toggle("gv-keys-open", open);
    resize(v);
    return;
  }
  if (a === "replay") {
    const on = v.replayToggle.getAttribute("aria-pressed") !== "true";
    v.replayToggle.setAttribute("aria-pressed", on ? "true" : "false");
    v.replayToggle.disabled = true; // until the run with hooks comes back
    v.setStateValue(STATE.replay, on);
    return;
  }
  if (a === "fit") fit(v);
  else if (a === "zoomin") zoomBy(v, ZOOM_STEP);
  else if (a === "zoomout") zoomBy(v, 1 / ZOOM_STEP);
  else if (a === "fullscreen") toggleFullscreen(v);
  else replayAct(v, a);
}

function toggleFullscreen(v) {
  if (document.fullscreenElement) document.exitFullscreen();
  else v.root.requestFullscreen?.().catch(() => {});
  v.canvas.focus({ preventScroll: true });
}

/** The offer of a stage's own replay toggle: on, off, or none (null). */
export function offerReplay(v, stage) {
  const offer = stage.replay !== null && stage.replay !== undefined;
  v.replayToggle.hidden = !offer;
  if (offer) {
    v.replayToggle.setAttribute("aria-pressed", stage.replay ? "true" : "false");
    v.replayToggle.title = stage.replay_help || "";
    v.replayToggle.disabled = false;
  }
}
