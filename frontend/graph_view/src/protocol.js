// The names the browser and the server share, each declared once here and imported by
// every module that uses it. What the server sends the graph view is one JSON payload,
// documented in the docstring of stockdemo/render/payload.py; what comes back, and the
// names the page's small components share with the view, are below. Python reads the
// same keys: stockdemo/ui/graph_view.py and stage.py (the view and the settle listener),
// classmode/keeper.py (the teacher's keeper), classmode/mover.py (the mover).

/**
 * Fired on `window` by a stage once its learner stops moving (pacing.js), with
 * `detail` {req, graph}: the request last sent and the picture on screen. The settle
 * listener (settle.js) turns it into its trigger `settled`.
 */
export const SETTLED_EVENT = "stockdemo:settled";

/**
 * Fired on `window` by a graph view when the pointer rests on a node made by a line of
 * code, and when it leaves it, with `detail` {file, line} (1-based) or null. The code
 * editor (frontend/code_editor) highlights that line when `file` is the code it holds.
 */
export const LINE_EVENT = "stockdemo:line";

/**
 * Fired on `window` by the code editor (frontend/code_editor) when the code's own socket
 * answered a Run with its graph (stockdemo/ui/code_route.py), with `detail` {n, data}: the
 * Run's number and the graph view's payload. A view whose payload says `stage.served` draws
 * it and cancels the event (preventDefault): the editor then knows it was drawn.
 */
export const SERVED_EVENT = "stockdemo:served";

/** `window[STAGES]`: the Set of graph views drawn as a stage now (a page has one, or none). */
export const STAGES = "stockdemoStages";

/** `window[BUNDLE]`: the load of the view's drawing code (loader.js): "loading", "ready" or "failed". */
export const BUNDLE = "stockdemoBundle";

/** `sessionStorage[TEACHER_KEY]`: the teacher's "code:key", kept by this tab (class_keeper.js). */
export const TEACHER_KEY = "stockdemo.teacher";

/** The graph view's state (setStateValue), kept by Streamlit and read in Python by these keys. */
export const STATE = {
  selected: "selected", // the id of the node the learner selected, or null
  knobs: "knobs", // a stage's request for a run: {knob name: value, ..., req: n}
  replay: "replay", // a stage's own "Replay this run" toggle: true or false
  unroll: "unroll", // the rolled boxes (payload `folds`) to draw unrolled: [fold id, ...]
};

/** Triggers (setTriggerValue): a value for the one run it causes. */
export const TRIGGER = {
  pin: "pin", // the graph view: "pin" (run A, beside the next runs) or "unpin"
  settled: "settled", // the settle listener: SETTLED_EVENT's detail, {req, graph}
  missing: "missing", // the settle listener: no stage drawn WATCH_MS after the panels
  restored: "restored", // the teacher's keeper: the "code:key" this tab kept
};

/* global stockdemoValues */
/**
 * The constants a small component's module was sent with. Python puts them before the
 * built module as `const stockdemoValues = {...};` (stockdemo/ui/assets.py), so a value
 * known when the server starts (a path, a period) is data, never spliced into code.
 */
export function builtWith() {
  return typeof stockdemoValues === "undefined" ? {} : stockdemoValues;
}
