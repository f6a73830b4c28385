// A big component's module, as Streamlit runs it: it imports the component's code (the
// graph view's static/graph_view.js, the editor's static/code_editor.js: files the browser
// fetches once) and hands it the component. Python sends it with the code's address,
// `builtWith().bundle`, named by its content so a rebuild is never stale
// (stockdemo/ui/graph_view.py, code_editor.py). Only the graph view's load is told to the
// stage's watch (`watched`).
//
// A failed import (a server restarting, a replica killed while the tab loads) is tried
// again, at another address (a browser keeps a module that failed as failed); after that
// the view says so, in the words its payload brought (`words.text.load_failed`, in the
// reader's language), and the next payload starts again (the stage's watch, settle.js,
// sends one). The failure is never thrown to Streamlit: a component that threw stays an
// error box, whatever it is sent next, until a reload.

import { BUNDLE, builtWith } from "./protocol.js";
import { Words } from "./words.js";

const RETRIES = 4; // waits of 0.5, 1, 2 and 4 s: 7.5 s in all
const FIRST_WAIT_MS = 500;

let drawing;
let tried = 0; // each import goes to an address not tried before in this tab

async function load(url) {
  for (let tries = 0; ; tries++) {
    try {
      return await import(tried++ ? `${url}&try=${tried - 1}` : url);
    } catch (e) {
      if (tries >= RETRIES) throw e;
      await new Promise((done) => setTimeout(done, FIRST_WAIT_MS * 2 ** tries));
    }
  }
}

/** The payload's sentence for a load that failed (read only then: a payload may be large). */
function failedWords(data) {
  try {
    return new Words((typeof data === "string" ? JSON.parse(data) : data)?.words).say("load_failed");
  } catch {
    return "⚠";
  }
}

/** Streamlit runs this text as a module from a blob: URL: the address is resolved against the page's origin. */
export default async function (component) {
  const { bundle, watched = true } = builtWith();
  const tell = (state) => { if (watched) window[BUNDLE] = state; };
  if (!drawing) {
    tell("loading");
    drawing = load(new URL(bundle, window.location.origin).href).then(
      (m) => { tell("ready"); return m; },
      (e) => { drawing = undefined; tell("failed"); throw e; });
  }
  let view;
  try {
    view = await drawing;
  } catch (e) {
    console.error(bundle, e);
    const note = component.parentElement.querySelector(".gv-load-failed") ?? document.createElement("p");
    note.className = "gv-load-failed";
    note.setAttribute("role", "alert");
    note.textContent = failedWords(component.data);
    component.parentElement.append(note);
    return () => note.remove();
  }
  component.parentElement.querySelector(".gv-load-failed")?.remove();
  return view.default(component);
}
