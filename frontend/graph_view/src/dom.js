// DOM helpers shared by the view's parts: one copy of each. Their words are keys
// (words.js): `relabel` says them in the payload's language.

/** A new element: `attrs` set as attributes, in order; `text`, if given, as its text. */
export function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * A toolbar button: `act` (its data-act) names what it does; `text`, the key of its words,
 * or `symbol`, drawn as it is (− + ?); `label`, the key of its name and tooltip.
 */
export function button(act, { text, symbol, label } = {}) {
  const b = el("button", { type: "button", "data-act": act, class: "gv-btn" }, symbol);
  if (text) b.dataset.say = text;
  if (label) b.dataset.sayLabel = label;
  return b;
}
