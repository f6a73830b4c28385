// The "Your code" page's editor: CodeMirror 6 with Python, as a Streamlit components v2 frontend.
//
// The server sends the code to show (replaced only when its `doc_key` changes, so a rerun
// never overwrites what the learner is typing), the text to show it as a diff against
// (a ready-made edit against the seed), and the error of the last run (its line is marked).
// Once the learner types or pastes, the diff is against the text of their last run, while it
// stays small; a bigger one (a pasted program) shows no diff until the next run.
// The one value sent back is the trigger `run`: the code, when the learner presses Run or
// Ctrl/Cmd+Enter (after the graph of its run is drawn, where the code's own socket answers it
// first: runs.js). Text typed and not yet run is kept in the tab (sessionStorage) while the
// server names a `draft`: a reload, or a new session after a dropped connection, that opens
// on the same text gets the typing back. Hovering a graph node highlights the line that made it: the graph view
// says so with the window event LINE_EVENT.

import { EditorState, StateEffect, StateField, Compartment, Text } from "@codemirror/state";
import {
  Decoration, EditorView, WidgetType, drawSelection, highlightActiveLine, highlightActiveLineGutter,
  keymap, lineNumbers,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  StreamLanguage, bracketMatching, defaultHighlightStyle, indentOnInput, indentUnit, syntaxHighlighting,
} from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { toml } from "@codemirror/legacy-modes/mode/toml";
import { Chunk, unifiedMergeView } from "@codemirror/merge";
import { mount } from "../../graph_view/src/mounts.js";
import { LINE_EVENT } from "../../graph_view/src/protocol.js";
import { Words, relabel } from "../../graph_view/src/words.js";
import { DirectRuns } from "./runs.js";

const RUN_KEY = "Mod-Enter";
const CODE_FILE = "<your code>"; // the file name the sandbox compiles the code under
const editors = new WeakMap();
// The learner's changes since their last run are shown while at most this many of its lines
// are gone: a few read as a change, a pasted program's 20 red lines read as noise.
const SHOWN_GONE_LINES = 4;
// The tab's one unsent text: {key: the server's draft name, base: the text it was typed on, text}.
const DRAFT_SLOT = "sd-code-draft";
const DRAFT_SAVE_MS = 250;
// The text's language (the server's `language`): Python for learners' code, TOML for a lesson.
const LANGUAGES = { python: () => python(), toml: () => StreamLanguage.define(toml) };

export default function codeEditor(component) {
  const { parentElement, setTriggerValue } = component;
  return mount(editors, parentElement, () => new CodeEditor(parentElement), (editor) => {
    editor.setTriggerValue = setTriggerValue || (() => {});
    const data = (typeof component.data === "string" ? JSON.parse(component.data) : component.data) ?? {};
    // After the next frame: a run's graph beside the editor is what the learner waits for, and
    // the editor's redraw before it (its dispatches, its height) made the view's first frame
    // lay the page out again. The latest payload wins.
    const seq = (editor.payloads = (editor.payloads ?? 0) + 1);
    requestAnimationFrame(() => setTimeout(() => {
      if (seq === editor.payloads) editor.update(data);
    }));
  });
}

// -- marks: the failing line, and the line a hovered graph node came from --------------
const setError = StateEffect.define();
const setHover = StateEffect.define();

class ErrorNote extends WidgetType {
  constructor(text) {
    super();
    this.text = text;
  }

  eq(other) {
    return other.text === this.text;
  }

  toDOM() {
    const note = document.createElement("div");
    note.className = "sd-error-note";
    note.setAttribute("role", "alert");
    note.textContent = this.text;
    return note;
  }
}

/** A field holding one marked line: decorations for it, rebuilt when its effect arrives. */
function lineMark(effect, lineClass, note) {
  return StateField.define({
    create: () => Decoration.none,
    update(marks, tr) {
      marks = marks.map(tr.changes);
      for (const e of tr.effects) {
        if (!e.is(effect)) continue;
        const mark = e.value;
        if (!mark || !(mark.line >= 1) || mark.line > tr.state.doc.lines) return Decoration.none;
        const line = tr.state.doc.line(mark.line);
        const ranges = [Decoration.line({ class: lineClass }).range(line.from)];
        if (note && mark.message) {
          ranges.push(Decoration.widget({ widget: new ErrorNote(mark.message), block: true, side: 1 })
            .range(line.to));
        }
        marks = Decoration.set(ranges);
      }
      return marks;
    },
    provide: (field) => EditorView.decorations.from(field),
  });
}

const errorField = lineMark(setError, "sd-error-line", true);
const hoverField = lineMark(setHover, "sd-hover-line", false);

// -- the diff: what the editor's text is compared with ---------------------------------
// "edit": the server's base (a ready-made edit against the seed); "run": the text of the
// learner's last run; "none": no diff (the learner's change is too big to read as one).
const setAgainst = StateEffect.define();
const againstField = StateField.define({
  create: () => "none",
  update(against, tr) {
    for (const e of tr.effects) if (e.is(setAgainst)) against = e.value;
    return against;
  },
});

/** The merge view showing the learner's changes since `ran`: a changed line inline, in its place. */
function runDiff(ran) {
  return unifiedMergeView({ original: ran, mergeControls: false, gutter: true, allowInlineDiffs: true });
}

/** How many lines of `a` are gone or changed in `b`. */
function goneLines(a, b) {
  let gone = 0;
  for (const chunk of Chunk.build(a, b)) {
    if (chunk.toA > chunk.fromA) gone += a.lineAt(chunk.endA).number - a.lineAt(chunk.fromA).number + 1;
  }
  return gone;
}

/** The tab's unsent text, or null (none, or storage this browser refuses). */
function readDraft() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(DRAFT_SLOT) ?? "null");
    return kept && typeof kept.text === "string" && typeof kept.base === "string" ? kept : null;
  } catch {
    return null;
  }
}

function writeDraft(draft) {
  try {
    if (draft) sessionStorage.setItem(DRAFT_SLOT, JSON.stringify(draft));
    else sessionStorage.removeItem(DRAFT_SLOT);
  } catch {
    // storage refused (a private window's quota): the typing is kept as long as the page is
  }
}

class CodeEditor {
  constructor(parent) {
    this.parent = parent;
    this.root = parent.querySelector(".ce-host") ?? parent;
    this.root.classList.add("ce-root");
    this.runs = 0;
    this.direct = new DirectRuns(this); // Runs on the code's own socket, where offered
    this.docKey = null;
    this.ran = Text.empty; // the text of the last run: the server's text, then each Run's
    this.diff = new Compartment();
    this.lock = new Compartment();
    this.said = new Compartment(); // the words CodeMirror says (its phrases, the code's name)

    const bar = document.createElement("div");
    bar.className = "ce-bar";
    this.runButton = document.createElement("button");
    this.runButton.type = "button";
    this.runButton.className = "ce-run";
    this.runButton.dataset.say = "run";
    this.runButton.dataset.sayTitle = "run_help";
    this.runButton.addEventListener("click", () => this.run());
    this.status = document.createElement("span");
    this.status.className = "ce-status";
    this.status.setAttribute("aria-live", "polite");
    this.hint = document.createElement("span");
    this.hint.className = "ce-hint";
    this.hint.dataset.say = "hint";
    // What a ready-made edit teaches, over the diff it explains.
    this.lesson = document.createElement("p");
    this.lesson.className = "ce-lesson";
    bar.append(this.runButton, this.status, this.hint, this.lesson);

    this.host = document.createElement("div");
    this.host.className = "ce-editor";
    // What the last run printed, under the code it came from (a region a keyboard can scroll).
    this.out = document.createElement("pre");
    this.out.className = "ce-out";
    this.out.tabIndex = 0;
    this.out.dataset.sayAria = "printed";
    this.out.hidden = true;
    this.root.replaceChildren(bar, this.host, this.out);

    this.view = new EditorView({
      parent: this.host,
      state: this.state(""),
    });
    // For tests (documented in stockdemo/ui/code_editor.py): the text the editor holds now.
    this.root.ceText = () => this.view.state.doc.toString();
    // The graph view names a node's line on hover: only the lines of the code held here.
    this.onLine = (ev) => this.hoverLine(ev.detail?.file === CODE_FILE ? ev.detail.line : null);
    window.addEventListener(LINE_EVENT, this.onLine);
    this.onResize = () => this.fitHeight(this.data?.height);
    window.addEventListener("resize", this.onResize);
  }

  state(doc, base = null, against = base === null ? "run" : "edit") {
    return EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        indentUnit.of("    "),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        (LANGUAGES[this.data?.language] ?? LANGUAGES.python)(),
        keymap.of([
          { key: RUN_KEY, run: () => this.run(), preventDefault: true },
          indentWithTab,
          ...defaultKeymap,
          ...historyKeymap,
        ]),
        this.said.of(this.saying()),
        errorField,
        hoverField,
        againstField.init(() => against),
        this.diff.of(against === "none" ? [] : base === null ? runDiff(this.ran)
          : unifiedMergeView({ original: base, mergeControls: false, gutter: true })),
        EditorState.transactionExtender.of((tr) => this.followChange(tr)),
        EditorView.updateListener.of((u) => { if (u.docChanged) this.keepDraft(); }),
        this.lock.of([]),
      ],
    });
  }

  /** CodeMirror's words in the payload's language: its phrases and the code's accessible name.
   *  tabindex: a tab stop axe-core counts (a contenteditable alone is not), and a locked
   *  editor stays reachable to read. */
  saying() {
    const w = this.words;
    if (!w) return [];
    return [EditorState.phrases.of(w.phrases),
      EditorView.contentAttributes.of({ "aria-label": w.say("code"), tabindex: "0" })];
  }

  /** The payload's words (graph_view's words.js): said again when they change (a language,
   *  or a lesson file's editor, which says Preview where a learner's code says Run). */
  takeWords(sent) {
    const text = JSON.stringify(sent ?? null);
    if (text === this.wordsSent) return;
    this.wordsSent = text;
    this.words = new Words(sent);
    relabel(this.root, this.words);
    this.view.dispatch({ effects: this.said.reconfigure(this.saying()) });
  }

  update(data) {
    this.data = data;
    this.takeWords(data.words);
    this.root.classList.toggle("ce-present", !!data.present);
    if (data.doc_key !== this.docKey) {
      // A new text from the server (a ready-made edit, a link, the teacher's code): the
      // editor starts again from it, its undo history with it. The server runs it.
      this.docKey = data.doc_key;
      this.ran = Text.of((data.doc ?? "").split(/\r\n?|\n/));
      const typed = this.draftOn(data);
      if (typed === null) this.view.setState(this.state(data.doc ?? "", data.base ?? null));
      else {  // the learner's typing since, against the text they typed it on
        const against = goneLines(this.ran, Text.of(typed.split("\n"))) > SHOWN_GONE_LINES ? "none" : "run";
        this.view.setState(this.state(typed, null, against));
      }
      this.fitHeight(data.height);
      this.scrollTo(data.focus_line);
    }
    this.view.dispatch({ effects: setError.of(data.error ?? null) });
    if (data.error?.line) this.scrollTo(data.error.line, true);
    const answered = (data.ran ?? 0) >= this.runs;
    // A following student holds the teacher's code: readable, not editable, not runnable.
    this.runButton.disabled = !!data.locked;
    this.view.dispatch({ effects: this.lock.reconfigure(EditorState.readOnly.of(!!data.locked)) });
    this.status.textContent = data.locked ? data.locked : answered ? (data.status ?? "") : this.words.say("running");
    this.lesson.textContent = data.lesson ?? "";
    this.lesson.hidden = !data.lesson;
    this.out.textContent = data.printed ?? "";
    this.out.hidden = !data.printed;
    this.fitHeight(data.height);
  }

  /** A change by the learner: the diff leaves the edit's base for their last run, and goes
   *  when more than SHOWN_GONE_LINES of that run's lines are gone (until the next run). */
  followChange(tr) {
    const against = tr.startState.field(againstField);
    if (!tr.docChanged || against === "none") return null;
    if (goneLines(this.ran, tr.newDoc) > SHOWN_GONE_LINES) {
      return { effects: [setAgainst.of("none"), this.diff.reconfigure([])] };
    }
    if (against === "edit") return { effects: [setAgainst.of("run"), this.diff.reconfigure(runDiff(this.ran))] };
    return null;
  }

  /** The text typed in this tab on the server's `doc`, not yet run, if the server names the
   *  draft it was typed for; else null. */
  draftOn(data) {
    const kept = readDraft();
    if (!data.draft || !kept || kept.key !== data.draft || kept.base !== (data.doc ?? "")
        || kept.text === kept.base) return null;
    return kept.text;
  }

  /** Keep the text typed (a moment after the last key) while the server names a draft. */
  keepDraft() {
    clearTimeout(this.draftTimer);
    const key = this.data?.draft;
    if (!key) return;
    this.draftTimer = setTimeout(() => writeDraft(
      { key, base: this.ran.toString(), text: this.view.state.doc.toString() }), DRAFT_SAVE_MS);
  }

  run() {
    if (this.data?.locked) return true;
    this.runs = Math.max(this.runs, this.data?.ran ?? 0) + 1;
    const code = this.view.state.doc.toString();
    if (!this.direct.send(this.data?.direct, code, this.runs)) this.sendRun(code, this.runs);
    clearTimeout(this.draftTimer);
    writeDraft(null);  // nothing typed is unsent now: the run carries it
    this.ran = this.view.state.doc;
    // The editor's own redraw (the diff against this run) in a task after Streamlit's send (its
    // own timer, queued first): a change to the page now made the browser draw a frame before
    // the send, 10-15 ms of the press.
    setTimeout(() => this.markRan(this.ran));
    return true;
  }

  /** Run `n` of `code` to the page's run (the trigger `run`). */
  sendRun(code, n) {
    this.setTriggerValue("run", { code, n });
  }

  /** The words beside Run. */
  say(text) {
    this.status.textContent = text;
  }

  /** The diff against the run just sent, and its status. */
  markRan(ran) {
    if (this.ran !== ran) return;  // another run since
    if (this.view.state.field(againstField) !== "edit") {  // an edit run as it is keeps its diff
      this.view.dispatch({ effects: [setAgainst.of("run"), this.diff.reconfigure(runDiff(ran))] });
    }
    this.say(this.words.say("running"));
  }

  /** Scroll the editor (never the page) so `line` is near its top, or just in view (`nearest`).
   *  A frame later, in CodeMirror's measure cycle: a text just set has been measured by then,
   *  so the editor's own scroll anchoring does not move it again. */
  scrollTo(line, nearest = false) {
    if (!(line >= 1)) return;
    requestAnimationFrame(() => this.measureScroll(line, nearest));
  }

  measureScroll(line, nearest) {
    const margin = 24;
    this.view.requestMeasure({
      read: (view) => {
        const doc = view.state.doc;
        const block = view.lineBlockAt(doc.line(Math.min(line, doc.lines)).from);
        const scroller = view.scrollDOM;
        if (nearest && block.top >= scroller.scrollTop + margin
            && block.bottom <= scroller.scrollTop + scroller.clientHeight - margin) return null;
        return Math.max(0, block.top - margin);
      },
      write: (top, view) => {
        if (top !== null) view.scrollDOM.scrollTop = top;
      },
    });
  }

  hoverLine(line) {
    this.view.dispatch({ effects: setHover.of(line ? { line } : null) });
    if (line) this.scrollTo(line, true);
  }

  /** The editor takes `height` px, or the height the window leaves under its top. */
  fitHeight(height) {
    const bar = this.root.querySelector(".ce-bar")?.offsetHeight ?? 0;
    let px = height;
    if (!px) {
      const top = this.root.getBoundingClientRect().top + window.scrollY;
      px = Math.max(220, window.innerHeight - top - bar - 16);
    }
    // The printed text takes up to a third, the code the rest.
    const out = this.out.hidden ? 0 : Math.min(Math.round(px / 3), this.out.scrollHeight + 2);
    this.out.style.maxHeight = `${Math.round(px / 3)}px`;
    this.host.style.height = `${px - out - (out ? 6 : 0)}px`;
  }

  destroy() {
    this.direct.close();
    clearTimeout(this.draftTimer);
    window.removeEventListener(LINE_EVENT, this.onLine);
    window.removeEventListener("resize", this.onResize);
    this.view.destroy();
  }
}
