// The view's words, in the reader's language. The server sends them with every payload
// (`words`: stockdemo/render/words.py, said from the gettext catalogs), so the JavaScript
// holds keys, never the English: tests/test_view_words.py fails on English left in it.
//
// `sent` is {lang, text: {key: template}, counted: {key: {plural category: template}},
// phrases}: templates fill `{name}` from values (numbers written as the language writes
// them), and a count picks its form by Intl.PluralRules, the CLDR rules Babel's are.

const BRACES = /\{(\w+)\}/g;

export class Words {
  constructor(sent) {
    this.lang = sent?.lang || "en";
    this.text = sent?.text ?? {};
    this.counted = sent?.counted ?? {};
    this.phrases = sent?.phrases ?? {};
    this.rules = new Intl.PluralRules(this.lang);
    // Grouped from 1,000 on, as Babel writes them on the server's side of the page (1.234).
    this.whole = new Intl.NumberFormat(this.lang, { useGrouping: "always", maximumFractionDigits: 3 });
  }

  /** The words under `key`, their `{name}`s filled from `values`. */
  say(key, values) {
    return this.fill(this.text[key] ?? key, values);
  }

  /** The form of counted `key` for `n` (its `{n}` written for the language). */
  count(key, n, values) {
    const forms = this.counted[key] ?? {};
    return this.fill(forms[this.rules.select(n)] ?? forms.other ?? key, { n, ...values });
  }

  /** `x` as the language writes it: `digits` decimals, or up to 3 when not given. */
  number(x, digits) {
    if (digits === undefined) return this.whole.format(x);
    return new Intl.NumberFormat(this.lang, { useGrouping: "always", minimumFractionDigits: digits,
      maximumFractionDigits: digits }).format(x);
  }

  /** `x` to three significant figures; far from 1, in exponent form (1,23E-4). */
  significant(x) {
    const far = x !== 0 && (Math.abs(x) >= 1e4 || Math.abs(x) < 1e-3);
    return new Intl.NumberFormat(this.lang, far ? { notation: "scientific", maximumFractionDigits: 2 }
      : { maximumSignificantDigits: 3, minimumSignificantDigits: x === 0 ? 1 : 3 }).format(x);
  }

  /** A gradient norm; the payload's null is a norm that is not a finite number. */
  norm(x) {
    return x === null || x === undefined ? this.say("not_finite") : this.significant(x);
  }

  /** A size in bytes, in words: "512 B", "1.5 KB", "2.00 MB". */
  bytes(n) {
    if (n < 1024) return this.say("bytes", { n });
    if (n < 1024 * 1024) return this.say("kilobytes", { n: this.number(n / 1024, 1) });
    return this.say("megabytes", { n: this.number(n / 1024 / 1024, 2) });
  }

  fill(template, values) {
    if (!values) return template;
    return template.replace(BRACES, (whole, name) => {
      const v = values[name];
      if (v === undefined || v === null) return whole;
      return typeof v === "number" ? this.number(v) : String(v);
    });
  }
}

/**
 * Say the words of the elements under `root` that name their keys: `data-say` (the text),
 * `data-say-label` (the accessible name and the tooltip), `data-say-aria` (the accessible
 * name alone), `data-say-title` (the tooltip alone).
 */
export function relabel(root, w) {
  for (const e of root.querySelectorAll("[data-say]")) e.textContent = w.say(e.dataset.say);
  for (const e of root.querySelectorAll("[data-say-label]")) {
    e.setAttribute("aria-label", w.say(e.dataset.sayLabel));
    e.title = w.say(e.dataset.sayLabel);
  }
  for (const e of root.querySelectorAll("[data-say-aria]")) e.setAttribute("aria-label", w.say(e.dataset.sayAria));
  for (const e of root.querySelectorAll("[data-say-title]")) e.title = w.say(e.dataset.sayTitle);
}
