// The side panel beside the graph: the selected node's details and, while a replay
// runs, the forward code with the line running now, and the gradient legend.
//
// The view `v` holds the panel's elements (`side`, `selBox`, `sideHead`, `code`,
// `legend`), `codeItems` (one per code line) and `lastLine` (the line shown last).

import { resize } from "./box.js";
import { GRADIENT_STOPS } from "./draw.js";
import { el } from "./dom.js";
import { detailList } from "./tooltip.js";

/** The panel's elements, hidden until a node is selected or a replay runs. */
export function buildSide(v) {
  v.side = el("aside", { class: "gv-side", "data-say-aria": "side" });
  v.side.hidden = true;
  v.selBox = el("section", { class: "gv-selected", "data-say-aria": "selected_node" });
  v.selBox.hidden = true;
  v.sideHead = el("div", { class: "gv-side-head" });
  v.code = el("ol", { class: "gv-code" });
  v.legend = el("div", { class: "gv-legend" });
  v.side.append(v.selBox, v.sideHead, v.code, v.legend);
  return v.side;
}

/** The code panel of the payload's trace, and the gradient legend when replaying Backward. */
export function buildCode(v) {
  const tr = v.data.trace;
  v.code.replaceChildren();
  v.legend.replaceChildren();
  v.codeItems = null;
  showSide(v);
  // Built when a replay starts: hidden until then, so a view's first picture waits for none.
  if (!tr || !v.mode) return;
  v.codeItems = tr.code.map((li) => {
    const L = tr.lines[li];
    // Indented by padding, not spaces: a long line wraps under its own start.
    const item = el("li", { value: String(L.line) });
    item.style.setProperty("--indent", `${L.indent || 0}ch`);
    item.append(el("code", {}, L.text));
    v.code.append(item);
    return item;
  });
  if (v.mode === "backward") {
    const bar = el("div", { class: "gv-ramp" });
    bar.style.background = `linear-gradient(to right, ${GRADIENT_STOPS.join(",")})`;
    const lo = el("span", {}, v.words.norm(10 ** v.rp.lo)), hi = el("span", {}, v.words.norm(10 ** v.rp.hi));
    v.legend.append(el("div", {}, v.words.say("norm_legend")), bar, el("div", { class: "gv-ramp-ends" }));
    v.legend.lastChild.append(lo, hi);
  }
}

/** The panel holds the selected node's details and, while replaying, the code. */
export function showSide(v) {
  const replaying = !!(v.rp && v.mode);
  for (const e of [v.sideHead, v.code, v.legend]) e.hidden = !replaying;
  if (!replaying) {
    v.ending.hidden = true;
    v.root.dataset.ending = "0";
  }
  const had = !v.side.hidden;
  v.side.hidden = !replaying && v.selected < 0;
  if (had !== !v.side.hidden) resize(v);
}

/** The "Selected" box: the selected node's details, or nothing. */
export function showSelected(v) {
  const i = v.selected;
  v.selBox.replaceChildren();
  v.selBox.hidden = i < 0;
  if (i >= 0) {
    const named = v.data.selected_node;
    const title = named ? named.id : v.p.label[i].split("\n")[0];
    v.selBox.append(el("div", { class: "gv-side-head" }, v.words.say("selected", { node: title })));
    v.selBox.append(detailList(v, i));
  }
  showSide(v);
}

/** Mark source line `line` (-1: none) in the code panel, scrolled into the panel's view. */
export function showLine(v, line) {
  if (!v.codeItems) return;
  const code = v.rp.tr.code;
  v.codeItems.forEach((item, j) => item.classList.toggle("gv-now", code[j] === line));
  const now = line >= 0 ? v.codeItems[code.indexOf(line)] : null;
  // Scroll the panel only: scrollIntoView would scroll the page too.
  if (now && v.lastLine !== line) {
    const top = now.offsetTop - v.code.offsetTop;
    if (top < v.code.scrollTop || top + now.offsetHeight > v.code.scrollTop + v.code.clientHeight) {
      v.code.scrollTop = top - v.code.clientHeight / 3;
    }
  }
  v.lastLine = line;
}
