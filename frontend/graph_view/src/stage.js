// A stage: the view with its own controls (the strip), the run's figures and the
// pacing of its requests, a skip link, and compare mode (run A pinned above run B).
//
// The view `v` holds `cmp` (compare mode's run A, or null), `strip`, `figures`, `skip`.

import { plural } from "./dom.js";
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
  v.figures.update(on ? stage.figures : null);
  v.root.classList.toggle("gv-presenting", on && !!stage.present);
  if (!on) return;
  answered(v, stage);
  // While the learner's latest value is still on its way, their controls show it.
  v.strip.update(stage, v.inflight || v.pending);
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
    v.pinButton.textContent = "Pin as A";
    v.pinButton.title = "Pin this run as A, then change the settings: A and B drawn one above the other";
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
  v.paneLabels[0].textContent = `A · ${cmp.a_label} · ${plural(cmp.a.counts?.nodes ?? keep.n, "node")}`
    + ` · ${plural(c.removed_nodes, "node")} B lacks`;
  v.paneLabels[1].textContent = `B · ${cmp.b_label} · ${plural(v.data.counts?.nodes ?? 0, "node")}`
    + ` · ${plural(c.added_nodes, "node")} A lacks`;
  v.paneLabels[0].classList.add("gv-pane-a");
  v.paneLabels[1].classList.add("gv-pane-b");
  for (const label of v.paneLabels) label.hidden = false;
  v.pinButton.textContent = "Stop comparing";
  v.pinButton.title = "Unpin run A: back to one graph";
  v.change.hidden = false;
  v.change.textContent = `From A to B: ${plural(c.added_nodes, "node")} added, ${c.removed_nodes} removed; `
    + `${plural(c.added_edges, "edge")} added, ${c.removed_edges} removed.`;
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
  if (v.skip?.isConnected) return;
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
  a.textContent = "Skip to the graph and its controls";
  a.onclick = (ev) => {
    ev.preventDefault();
    const first = v.strip.root.querySelector("input[type=range], select") || v.canvas;
    first.focus();
    first.scrollIntoView?.({ block: "nearest" });
  };
  document.body.prepend(a);
  v.skip = a;
}
