// DOM helpers and number formats shared by the view's parts: one copy of each.

/** A new element: `attrs` set as attributes, in order; `text`, if given, as its text. */
export function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A toolbar button: `act` (its data-act) names what it does; `label` is its name and tooltip. */
export function button(act, text, label) {
  const b = el("button", { type: "button", "data-act": act, class: "gv-btn" }, text);
  if (label) {
    b.setAttribute("aria-label", label);
    b.title = label;
  }
  return b;
}

/** A size in bytes, in words: "512 B", "1.5 KB", "2.00 MB". */
export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(2)} MB`;
}

/** A gradient norm in three figures; far from 1, in exponent form. */
export function fmtNorm(v) {
  if (v === null || v === undefined) return "NaN or ∞"; // the payload's null: not a finite number
  if (v === 0) return "0";
  return Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3 ? v.toExponential(2) : v.toPrecision(3);
}

/** A count and its noun: "1 node", "2,240 nodes". */
export function plural(n, word) {
  return `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
}
