// A node's details, as the tooltip over the graph shows them and the side panel's
// "Selected" box lists them.
//
// The view `v` holds `tip` (the tooltip element) and `standsIndex` (a cache).

import { el } from "./dom.js";

/** What box `i` stands for when it draws more than its own node (a rolled block, a fold). */
function standsFor(v, i) {
  const sf = v.data.stands_for;
  if (!sf || !sf.node) return null;
  if (!v.standsIndex || v.standsIndex.data !== v.data) {
    v.standsIndex = { data: v.data, map: new Map(sf.node.map((n, j) => [n, sf.text[j]])) };
  }
  return v.standsIndex.map.get(i) ?? null;
}

/** The line of code that made node `i`, {file, line, text}, or null: the payload's `code`
 * table (a code graph), else the replay's own source of the node. */
export function lineOf(v, i) {
  const d = v.data;
  const k = d.nodes.line ? d.nodes.line[i] : -1;
  if (k >= 0 && d.code) {
    return { file: d.strings[d.code.file[k]], line: d.code.line[k], text: d.strings[d.code.text[k]] };
  }
  const s = d.trace ? d.trace.source[i] : -1;
  if (s >= 0) {
    const L = d.trace.lines[s];
    return { file: L.file, line: L.line, text: L.text };
  }
  return null;
}

/** Node `i`'s details: [name, value] rows, the empty ones left out. */
function details(v, i) {
  const d = v.data, nd = d.nodes, tr = d.trace, p = v.p, w = v.words;
  const rows = [];
  const add = (name, val) => { if (val !== null && val !== undefined && val !== "") rows.push([name, String(val)]); };
  // The selected box may draw many nodes (rolled): the details name the node the
  // link names, with its own step, and say what the box stands for.
  const named = i === v.selected && d.selected_node ? d.selected_node : null;
  add(w.say("row_node"), named ? named.id : nd.id[i]);
  add(w.say("row_op"), p.op[i]);
  add(w.say("row_parameter"), named ? named.param : p.param[i]);
  add(w.say("row_shape"), named ? named.shape : p.shape[i]);
  const step = named ? named.step : nd.step[i], layer = named ? named.layer : nd.layer[i];
  if (step !== null || layer !== null) {
    add(w.say("row_step_layer"), w.say("step_layer", { step: step ?? "–", layer: layer ?? "–" }));
  }
  add(w.say("row_stands_for"), named ? named.stands_for : standsFor(v, i));
  if (tr) {
    const s = tr.saved_n[i];
    if (s >= 0) add(w.say("row_saved"), w.count("tensors_of", s, { size: w.bytes(tr.saved_bytes[i]) }));
    const line = tr.source[i];
    if (line >= 0) {
      const L = tr.lines[line];
      add(w.say("row_created_by"), `${L.file}:${L.line} (${L.function})  ${L.text}`);
    }
  }
  if (!tr || tr.source[i] < 0) {
    const L = lineOf(v, i);
    if (L) add(w.say("row_created_by"), `${L.file}:${L.line}  ${L.text}`);
  }
  const norm = v.look && v.look.norm && v.look.norm.get(i);
  if (norm !== undefined && norm !== null) add(p.param[i] ? w.say("row_grad") : w.say("row_incoming_grad"), w.norm(norm));
  if (v.newSet.has(i)) add(w.say("row_new"), w.say("new_since"));
  if (d.folds?.node?.includes(i)) add(w.say("row_click"), w.say("click_unrolls"));
  return rows;
}

/** Node `i`'s details as a definition list. */
export function detailList(v, i) {
  const dl = el("dl");
  for (const [k, val] of details(v, i)) dl.append(el("dt", {}, k), el("dd", {}, val));
  return dl;
}

/** The tooltip of node `i`, beside the pointer (`ev`) or, from the keyboard, under the node. */
export function showTip(v, i, ev) {
  const tip = v.tip;
  tip.replaceChildren();
  const title = el("div", { class: "gv-tip-title" }, v.p.label[i].split("\n")[0]);
  tip.append(title, detailList(v, i));
  tip.hidden = false;
  const [W, H] = v.size;
  let sx, sy;
  if (ev && ev.clientX !== undefined) {
    const r = v.canvas.getBoundingClientRect();
    sx = ev.clientX - r.left;
    sy = ev.clientY - r.top;
  } else {
    sx = v.p.x[i] * v.t.k + v.t.x;
    sy = (v.p.y[i] + v.p.h[i] / 2) * v.t.k + v.t.y;
  }
  const tw = tip.offsetWidth, th = tip.offsetHeight;
  tip.style.left = `${Math.max(4, Math.min(W - tw - 4, sx + 14))}px`;
  tip.style.top = `${sy + 14 + th > H ? Math.max(4, sy - th - 10) : sy + 14}px`;
}
