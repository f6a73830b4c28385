// The run's figures over a stage's graph: output shape, parameters, nodes (and the
// change since the previous run), edges, timings. Drawn by the view, from the same
// payload as the graph: never a step behind it while the learner drags, and no
// element of the page's own for Streamlit to redraw on every value (a stage step
// then carried one element, the view). The same markup as the page's metric rows
// (stockdemo.ui.metric_row), so tests read both alike.

import { el } from "./dom.js";

function deltaText(d, words) {
  const n = words.number(Math.abs(d));
  if (d > 0) return ["up", `↑ +${n}`];
  if (d < 0) return ["down", `↓ −${n}`];
  return ["flat", `± ${n}`];
}

export class Figures {
  constructor() {
    this.root = el("dl", { class: "gv-figures" });
    this.root.hidden = true;
    this.signature = "";
    this.items = [];
  }

  /** `figures`: [{label, value, delta, help}], or none to hide the row; `words`: the payload's (words.js). */
  update(figures, words) {
    this.root.hidden = !figures || !figures.length;
    if (this.root.hidden) return;
    const sig = figures.map((f) => `${f.label}\u0000${f.help || ""}`).join("\u0001");
    if (sig !== this.signature) this.build(figures, sig);
    figures.forEach((f, i) => {
      const item = this.items[i];
      item.value.textContent = f.value;
      const has = f.delta !== null && f.delta !== undefined;
      item.delta.hidden = !has;
      if (has) {
        const [sign, text] = deltaText(f.delta, words);
        item.delta.className = `gv-delta gv-${sign}`;
        item.delta.textContent = text;
      }
    });
  }

  build(figures, sig) {
    this.signature = sig;
    this.root.replaceChildren();
    this.items = figures.map((f) => {
      const box = el("div", { class: "gv-figure", "data-testid": "sdMetric" });
      const label = el("dt", { "data-testid": "sdMetricLabel" }, f.label);
      if (f.help) {
        label.append(el("span", { class: "gv-mark", tabindex: "0", role: "img", "aria-label": f.help,
          title: f.help }, "?"));
      }
      const value = el("dd", { "data-testid": "sdMetricValue" });
      const delta = el("dd", { class: "gv-delta", "data-testid": "sdMetricDelta" });
      box.append(label, value, delta);
      this.root.append(box);
      return { value, delta };
    });
  }
}
