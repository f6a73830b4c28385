// The graph view component's module, as Streamlit runs it: it imports the view's drawing
// code (static/graph_view.js, a file the browser fetches once) and hands it the component.
// Python sends it with the drawing code's address, `builtWith().bundle`, named by its
// content so a rebuild is never stale (stockdemo/ui/graph_view.py).
//
// A failed import (a server restarting, a replica killed while the tab loads) is tried
// again, at another address (a browser keeps a module that failed as failed); after that
// the view says so, in words, and the next payload starts again (the stage's watch,
// settle.js, sends one). The failure is never thrown to Streamlit: a component that threw
// stays an error box, whatever it is sent next, until a reload.

import { BUNDLE, builtWith } from "./protocol.js";

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

/** Streamlit runs this text as a module from a blob: URL: the address is resolved against the page's origin. */
export default async function (component) {
  if (!drawing) {
    window[BUNDLE] = "loading";
    drawing = load(new URL(builtWith().bundle, window.location.origin).href).then(
      (m) => { window[BUNDLE] = "ready"; return m; },
      (e) => { drawing = undefined; window[BUNDLE] = "failed"; throw e; });
  }
  let view;
  try {
    view = await drawing;
  } catch (e) {
    console.error("stockdemo: the graph's drawing code did not load", e);
    const note = component.parentElement.querySelector(".gv-load-failed") ?? document.createElement("p");
    note.className = "gv-load-failed";
    note.setAttribute("role", "alert");
    note.textContent = "The graph's drawing code did not load (is the server restarting?). " +
      "It is tried again with the next run; reload the page if the graph stays away.";
    component.parentElement.append(note);
    return () => note.remove();
  }
  component.parentElement.querySelector(".gv-load-failed")?.remove();
  return view.default(component);
}
