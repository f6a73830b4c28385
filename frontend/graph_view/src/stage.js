// A stage: the view with its own controls (the strip), the run's figures and the
// pacing of its requests, a skip link, and compare mode (run A pinned above run B).
//
// The view `v` holds `cmp` (compare mode's run A, or null), `strip`, `figures`, `skip`.

import { answered, sendPending } from "./pacing.js";
import { prepare } from "./picture.js";
import { offerReplay } from "./toolbar.js";

/** The payload's `stage` (or none): the strip, the figures and the toolbar's stage buttons. */
export function takeStage(v, stage) {
  const on = !!stage;
  v.root.classList.toggle("gv-staged", on);
  skipLink(v, on);
  v.strip.root.hidden = !on;
  v.change.hidden = !on || !stage.change || !!v.mode; // a replay's status says more
  v.figures.update(on ? stage.figures : null, v.words);
  v.root.classList.toggle("gv-presenting", on && !!stage.present);
  if (!on) return;
  answered(v, stage);
  // While the learner's latest value is still on its way, their controls show it.
  v.strip.update(stage, v.inflight || v.pending, v.words);
  v.change.textContent = stage.change || "";
  v.root.dataset.req = String(stage.req);
  sendPending(v);
  v.pinButton.hidden = stage.pin === false; // a stage with nothing to compare offers no pin
  offerReplay(v, stage);
}

/** The payload's `compare` (or none): the panes' captions, the pin button and the change line. */
export function takeCompare(v, cmp) {
  const ds = v.root.dataset;
  if (!cmp) {
    v.cmp = null;
    ds.compare = "0";
    for (const label of v.paneLabels) label.hidden = true;
    v.pinButton.textContent = v.words.say("pin");
    v.pinButton.title = v.words.say("pin_help");
    return;
  }
  const keep = v.cmp && v.cmp.data.graph === cmp.a.graph ? v.cmp.pa : prepare(cmp.a);
  v.cmp = { data: cmp.a, pa: keep, added: cmp.added, removed: cmp.removed, counts: cmp.counts };
  const c = cmp.counts;
  ds.compare = "1";
  ds.added = String(c.added_nodes);
  ds.removed = String(c.removed_nodes);
  ds.addedEdges = String(c.added_edges);
  ds.removedEdges = String(c.removed_edges);
  const w = v.words;
  v.paneLabels[0].textContent = ["A", cmp.a_label, w.count("node_n", cmp.a.counts?.nodes ?? keep.n),
    w.count("nodes_b_lacks", c.removed_nodes)].join(" · ");
  v.paneLabels[1].textContent = ["B", cmp.b_label, w.count("node_n", v.data.counts?.nodes ?? 0),
    w.count("nodes_a_lacks", c.added_nodes)].join(" · ");
  v.paneLabels[0].classList.add("gv-pane-a");
  v.paneLabels[1].classList.add("gv-pane-b");
  for (const label of v.paneLabels) label.hidden = false;
  v.pinButton.textContent = w.say("stop_comparing");
  v.pinButton.title = w.say("unpin_help");
  v.change.hidden = false;
  v.change.textContent = w.say("a_to_b", {
    nodes: w.count("nodes_added", c.added_nodes, { removed: c.removed_nodes }),
    edges: w.count("edges_added", c.added_edges, { removed: c.removed_edges }),
  });
}

/**
 * A stage page's first Tab stop: "Skip to the graph and its controls". It goes first
 * in the document, before Streamlit's sidebar, whose links stay Tab stops even while
 * it is closed; Enter lands on the strip's first control.
 */
export function skipLink(v, on) {
  if (!on) {
    v.skip?.remove();
    v.skip = null;
    return;
  }
  if (v.skip?.isConnected) {
    v.skip.textContent = v.words.say("skip");
    return;
  }
  if (!document.getElementById("gv-skip-style")) {
    const style = document.createElement("style");
    style.id = "gv-skip-style";
    style.textContent = ".gv-skip{position:fixed;left:-10000px;top:0.5rem;z-index:100000;"
      + "padding:0.4rem 0.8rem;border-radius:0.4rem;background:#0060A8;color:#fff;"
      + "font:600 1rem sans-serif;text-decoration:none}"
      + ".gv-skip:focus{left:0.5rem;outline:2px solid #1A1A1A;outline-offset:2px}";
    document.head.append(style);
  }
  document.querySelectorAll("a.gv-skip").forEach((old) => old.remove());
  const a = document.createElement("a");
  a.className = "gv-skip";
  a.href = "#";
  a.textContent = v.words.say("skip");
  a.onclick = (ev) => {
    ev.preventDefault();
    const first = v.strip.root.querySelector("input[type=range], select") || v.canvas;
    first.focus();
    first.scrollIntoView?.({ block: "nearest" });
  };
  document.body.prepend(a);
  v.skip = a;
}
