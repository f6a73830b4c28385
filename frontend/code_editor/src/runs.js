// A Run on the code's own socket (stockdemo/ui/code_route.py), where the server offers one
// (the payload's `direct`): the graph's payload comes back with no script run and goes to the
// graph view (SERVED_EVENT), and the page's run follows a frame later, with the same Run as
// the trigger `run`, to take it as the session's (its link, what it printed, its error's
// line). A run that made no graph (the page shows its error), a payload no view took, or a
// socket that fails: the trigger goes at once, a Run as without the socket, and a failed
// address is not used again.

import { SERVED_EVENT } from "../../graph_view/src/protocol.js";
import { openSocket } from "../../graph_view/src/socket.js";

export class DirectRuns {
  /** `editor`: the CodeEditor, with `runs` (the last Run's number), `sendRun(code, n)`
   *  (the trigger) and `say(text)` (the status beside Run). */
  constructor(editor) {
    this.editor = editor;
    this.socket = null;
    this.off = null; // the address that failed
    this.pending = null; // the Run awaiting its answer: {code, n}
  }

  /** Send Run `n` of `code` on the socket at `url` -> false when there is none to send it on. */
  send(url, code, n) {
    if (!url || url === this.off || typeof WebSocket !== "function") return false;
    if (this.socket?.url !== url) {
      this.close();
      this.socket = this.open(url);
    }
    this.pending = { code, n };
    this.socket.send(JSON.stringify({ code, n }));
    return true;
  }

  open(url) {
    const s = openSocket(url, (answer, fail) => this.answered(answer, fail), () => {
      if (this.socket !== s) return;
      this.off = url;
      this.socket = null;
      this.fallBack();
    });
    return s;
  }

  /** The socket's answer: a note while the run waits, or the run's graph (or none). */
  answered(answer, fail) {
    const p = this.pending;
    if (typeof answer?.n !== "number") return fail();
    if (!p || answer.n !== p.n) return; // a Run a newer one overtook: only the newer is drawn
    if (answer.queued) {
      this.editor.say(answer.queued);
      return;
    }
    this.pending = null;
    const drawn = !!answer.view && !window.dispatchEvent(new CustomEvent(SERVED_EVENT,
      { cancelable: true, detail: { n: p.n, data: answer.view } }));
    if (!drawn) {
      this.editor.sendRun(p.code, p.n);
      return;
    }
    this.editor.say(answer.status ?? "");
    // After the graph's first frame: the page's run and its redraw must not delay it.
    requestAnimationFrame(() => setTimeout(() => {
      if (this.editor.runs === p.n) this.editor.sendRun(p.code, p.n);
    }));
  }

  /** The Run awaiting its answer goes as the trigger instead. */
  fallBack() {
    const p = this.pending;
    this.pending = null;
    if (p && this.editor.runs === p.n) this.editor.sendRun(p.code, p.n);
  }

  close() {
    this.socket?.close();
    this.socket = null;
  }
}
