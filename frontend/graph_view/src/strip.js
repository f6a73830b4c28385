// The stage's strip: the run's main settings, drawn by the graph view itself so that
// a drag sends every value it crosses (Streamlit's slider sends one, on release).
//
// Each number is a native range input (mouse, touch and keyboard for free) between
// a step-down and a step-up button: on a phone the range is ~150 px for 1..200, too
// coarse for a finger, and the buttons step by exactly one. A number whose values have
// words (a film's "graph 3 of 5") shows them on one line with its range.

import { el } from "./dom.js";

let uid = 0;

export class Strip {
  /** `onChange(name, value, how)` is called for every value the learner picks. */
  constructor(onChange) {
    this.onChange = onChange;
    this.root = el("div", { class: "gv-strip", role: "group" });
    this.lock = el("div", { class: "gv-lock", role: "note" });
    this.lock.hidden = true;
    // On a narrow box (a phone) the controls after the first fold behind one button
    // that says their values; the first (T) always shows.
    this.moreBox = el("div", { class: "gv-more-knobs", id: `gv-more-${++uid}` });
    this.moreButton = el("button", { type: "button", class: "gv-btn gv-more", "aria-expanded": "false",
      "aria-controls": this.moreBox.id });
    this.moreButton.onclick = () => {
      const open = this.moreButton.getAttribute("aria-expanded") !== "true";
      this.moreButton.setAttribute("aria-expanded", open ? "true" : "false");
      this.root.classList.toggle("gv-open", open);
    };
    this.controls = new Map(); // name -> {spec, input, out, minus, plus}
    this.values = {};
    this.active = null; // the name of the range under the pointer, while dragging
    this.locked = false;
    this.signature = "";
  }

  /**
   * New controls from the server, said in `words` (words.js). Their values are taken unless
   * `hold` (the learner's latest values are still on their way) or the learner is dragging that control.
   */
  update(stage, hold, words) {
    this.words = words;
    this.root.setAttribute("aria-label", words.say("settings"));
    const sig = stage.controls.map((c) => `${c.name}:${c.label}:${c.low}:${c.high}:${(c.choices || []).length}`)
      .join("|");
    const fresh = sig !== this.signature;
    if (fresh) this.build(stage.controls, sig);
    for (const spec of stage.controls) {
      if (!fresh && (hold || spec.name === this.active)) continue;
      this.set(spec.name, spec.value);
    }
    this.locked = !!stage.locked;
    this.root.classList.toggle("gv-locked", this.locked);
    this.lock.hidden = !this.locked;
    this.lock.textContent = stage.locked || "";
    for (const c of this.controls.values()) this.enable(c);
  }

  /** Locked (a student following the teacher): nothing moves; else a step stops at its bound. */
  enable(c) {
    c.input.disabled = this.locked;
    if (!c.minus) return;
    const v = this.values[c.spec.name];
    c.minus.disabled = this.locked || v <= c.spec.low;
    c.plus.disabled = this.locked || v >= c.spec.high;
  }

  build(specs, sig) {
    this.signature = sig;
    this.root.replaceChildren();
    this.moreBox.replaceChildren();
    this.controls.clear();
    specs.forEach((spec, n) => {
      const id = `gv-knob-${++uid}`;
      const box = el("div", { class: "gv-knob", "data-knob": spec.name });
      const label = el("label", { for: id, title: spec.help || "" });
      const name = el("span", { class: "gv-knob-name" }, spec.label);
      label.append(name);
      const c = { spec };
      if (spec.choices) {
        const select = el("select", { id, class: "gv-select" });
        for (const [value, text] of spec.choices) select.append(el("option", { value }, text));
        select.onchange = () => this.pick(spec.name, select.value, "select");
        box.append(label, select);
        c.input = select;
      } else {
        const out = el("output", { class: "gv-knob-value", for: id, "aria-hidden": "true" });
        label.append(out);
        if (spec.words) { // each value in words ("graph 3 of 5"), which say what the name would
          box.classList.add("gv-knob-words");
          name.classList.add("gv-unseen");
          out.style.minWidth = `${Math.max(...spec.words.map((w) => w.length))}ch`;
        }
        const input = el("input", { id, type: "range", min: String(spec.low), max: String(spec.high),
          step: String(spec.step), class: "gv-range" });
        const minus = el("button", { type: "button", class: "gv-btn gv-step", "data-step": "-1",
          "aria-label": this.words.say("one_less", { knob: spec.label }) }, "−");
        const plus = el("button", { type: "button", class: "gv-btn gv-step", "data-step": "1",
          "aria-label": this.words.say("one_more", { knob: spec.label }) }, "+");
        input.addEventListener("pointerdown", () => { this.active = spec.name; });
        const release = () => { if (this.active === spec.name) this.active = null; };
        input.addEventListener("pointerup", release);
        input.addEventListener("pointercancel", release);
        input.addEventListener("blur", release);
        input.oninput = () => this.pick(spec.name, Number(input.value), this.active ? "drag" : "key");
        input.onchange = () => { release(); this.pick(spec.name, Number(input.value), "release"); };
        const stepBy = (d) => {
          const v = Math.min(spec.high, Math.max(spec.low, this.values[spec.name] + d * spec.step));
          this.pick(spec.name, v, "button");
        };
        minus.onclick = () => stepBy(-1);
        plus.onclick = () => stepBy(1);
        const row = el("div", { class: "gv-knob-row" });
        row.append(minus, input, plus);
        box.append(label, row);
        Object.assign(c, { input, out, minus, plus });
      }
      box.classList.add(`gv-knob-${spec.choices ? "choice" : "number"}`);
      (n === 0 ? this.root : this.moreBox).append(box);
      this.controls.set(spec.name, c);
    });
    this.root.append(this.moreButton, this.moreBox, this.lock);
    this.moreButton.hidden = specs.length < 2;
  }

  /** The fold's button says what it hides: "Hidden size 10 · Layers 1 · nn.RNN". */
  summarize() {
    const parts = [];
    let first = true;
    for (const c of this.controls.values()) {
      if (first) { first = false; continue; }
      const v = this.values[c.spec.name];
      const shown = c.spec.choices ? (c.spec.choices.find(([k]) => k === v) || [v, v])[1]
        : this.words.say("knob_value", { knob: c.spec.label, value: v });
      parts.push(shown);
    }
    this.moreButton.textContent = parts.join(" · ");
  }

  set(name, value) {
    const c = this.controls.get(name);
    if (!c) return;
    this.values[name] = value;
    if (String(c.input.value) !== String(value)) c.input.value = String(value);
    this.summarize();
    if (c.out) {
      const shown = c.spec.words?.[value - c.spec.low] ?? String(value);
      c.out.textContent = shown;
      c.input.setAttribute("aria-valuetext", shown);
    }
    this.enable(c);
  }

  pick(name, value, how) {
    // A release ("change") repeats the last value the drag sent: nothing new to run.
    if (this.values[name] === value) return;
    this.set(name, value);
    this.onChange(name, value, how);
  }
}
