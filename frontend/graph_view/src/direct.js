// A stage's moves on a socket of their own, with no script run (stockdemo/ui/stage_route.py).
// Where the server offers one (the payload's `stage.direct`, an address with this session's
// token), each request goes there, `{knob: value, ..., req}` as the component's state would
// carry it, and its answer is a payload, drawn as one from the page's run. When the socket
// fails (closed, refused, an answer that is not a payload), the view goes back to sending its
// values as the component's state (a run) until a payload offers another socket.
//
// The view `v` holds `socket` (socket.js's, with `failed`, the last request's fallback),
// `directOff` (the address that failed) and `servedSince` (a payload from a socket was drawn
// after the page's last one).

import { openSocket } from "./socket.js";

/** The payload on screen offers a socket for the next request, and it has not failed. */
export function directOffered(v) {
  const url = v.data?.stage?.direct;
  return !!url && v.directOff !== url && typeof WebSocket === "function";
}

/** Send one request on the socket, opening it first if needed; `failed()` once if it fails. */
export function sendDirect(v, message, failed) {
  const url = v.data.stage.direct;
  if (v.socket?.url !== url) {
    closeDirect(v);
    const s = openSocket(url, (data, fail) => {
      if (v.socket !== s || !data?.stage) return fail();
      v.servedSince = true;
      v.update(data);
    }, () => {
      if (v.socket !== s) return;
      dropDirect(v);
      s.failed();
    });
    v.socket = s;
  }
  v.socket.failed = failed;
  v.socket.send(JSON.stringify(message));
}

/** Stop using the socket: it failed, or its request was taken as lost. */
export function dropDirect(v) {
  if (v.socket) v.directOff = v.socket.url;
  closeDirect(v);
}

/** Close the socket without a word (the view is gone, or another address is offered). */
export function closeDirect(v) {
  const s = v.socket;
  v.socket = null;
  s?.close();
}
