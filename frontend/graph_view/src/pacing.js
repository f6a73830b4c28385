// A stage's request pacing: the strip's values go to the server one request at a time,
// the last value the learner picked always goes, a lost request goes again, and once the
// learner stops the page's panels are told to catch up (one event, not one per value).
//
// The view `v` holds the pacing's state: `req` (the last request sent), `inflight` (the
// request awaiting its answer, or 0), `pending` (a value was picked meanwhile), `sentAt`,
// `settledGraph` (the picture the panels last followed) and the two timers.

import { closeDirect, directOffered, dropDirect, sendDirect } from "./direct.js";
import { SETTLED_EVENT, STAGES, STATE } from "./protocol.js";

// Unanswered this long, a request is taken as lost (a rerun interrupted by another, a
// dropped socket): it goes again, so the last value picked is always drawn.
const REQUEST_TIMEOUT_MS = 4000;
// The learner has stopped when no value has been picked for this long.
const SETTLE_MS = 300;
// A stage following a class's teacher settles later: each move reaches every follower of
// a server at once, and their panels running together took the CPU their stages needed.
const FOLLOW_SETTLE_MS = 2000;

/** The graph views drawn as a stage on this page now, for the settle listener's watch. */
export function stages() {
  window[STAGES] ??= new Set();
  return window[STAGES];
}

/** A payload came: the view is registered as a stage while it has one. */
export function register(v, stage) {
  if (stage) stages().add(v);
  else stages().delete(v);
}

/** The stage's payload answers the request in flight once its `req` reaches it. */
export function answered(v, stage) {
  if (v.inflight && stage.req >= v.inflight) v.inflight = 0;
}

/** A value picked while the answered request was out goes now. */
export function sendPending(v) {
  if (v.pending && !v.inflight) requestRun(v);
}

/**
 * Send the strip's values, one request at a time; the last value always goes. On the
 * stage's own socket where the payload offers one (direct.js), else as the component's
 * state: a run of the stage.
 */
export function requestRun(v) {
  const now = performance.now();
  if (v.inflight && now - v.sentAt < REQUEST_TIMEOUT_MS) {
    v.pending = true;
    return;
  }
  v.req = Math.max(v.req, Number(v.data?.stage?.req) || 0) + 1;
  v.inflight = v.req;
  v.sentAt = now;
  v.pending = false;
  clearTimeout(v.lostTimer);
  const sent = v.req;
  const lost = () => {
    if (v.inflight !== sent) return; // answered, or a newer request went
    v.root.dataset.resent = String(Number(v.root.dataset.resent || 0) + 1);
    v.inflight = 0; // taken as lost: a timer a hair early must not find it still in time
    requestRun(v);
  };
  v.lostTimer = setTimeout(() => {
    if (v.inflight === sent) dropDirect(v); // a socket that does not answer is not used again
    lost();
  }, REQUEST_TIMEOUT_MS);
  v.root.dataset.sent = String(v.req);
  v.root.dataset.sentAt = now.toFixed(1); // for bench/bench_stage.py
  const knobs = { ...v.strip.values, req: v.req };
  if (directOffered(v)) {
    v.root.dataset.direct = String(Number(v.root.dataset.direct || 0) + 1);
    sendDirect(v, knobs, lost); // a failed socket: the same values again, as a run
  } else {
    v.setStateValue(STATE.knobs, knobs);
  }
  settleIn(v, SETTLE_MS);
}

/**
 * A new picture came (`newGraph`): one nobody here asked for (a class's teacher moved)
 * is settled on too. The first picture came with the page's panels, drawn in the same run.
 */
export function pictureCame(v, data, newGraph) {
  if (v.settledGraph === undefined) v.settledGraph = data.graph;
  if (newGraph && data.stage && !v.inflight) settleIn(v, data.stage.locked ? FOLLOW_SETTLE_MS : SETTLE_MS);
}

function settleIn(v, ms) {
  clearTimeout(v.settleTimer);
  v.settleTimer = setTimeout(() => settle(v), ms);
}

/**
 * Once the learner has stopped, once per picture (whoever moved it: the learner, a
 * preset, a teacher): SETTLED_EVENT, naming the picture, so the server can tell one it
 * sent that never arrived. The settle listener reruns the panels' fragment.
 */
function settle(v) {
  if (v.inflight || v.pending || v.strip.active) {
    v.settleTimer = setTimeout(() => settle(v), SETTLE_MS);
    return;
  }
  if (v.settledGraph === v.data.graph) return;
  v.settledGraph = v.data.graph;
  window.dispatchEvent(new CustomEvent(SETTLED_EVENT, { detail: { req: v.req, graph: v.data.graph } }));
}

/** The view is gone: no timer of its runs again, and it is no stage. */
export function stopPacing(v) {
  stages().delete(v);
  closeDirect(v);
  clearTimeout(v.settleTimer);
  clearTimeout(v.lostTimer);
}
