// A socket of the page's own beside Streamlit's (stockdemo/ui/seats.py): opened on an address
// a payload gave (with its session's token), a message sent once it is open (only the last
// one sent before), each JSON message it gets handed on. The stage's moves (direct.js) and
// the code's runs (frontend/code_editor/src/runs.js) go on one each.

/**
 * Open the socket at `url` (a path on this server). `onMessage(data, fail)` gets each message
 * parsed; `onFail()` is called once, when the socket closes, errs, sends what is not JSON or
 * `fail()` is called, unless `close()` came first.
 * @returns {{url: string, send(text: string): void, close(): void}}
 */
export function openSocket(url, onMessage, onFail) {
  const address = new URL(url, window.location.href);
  address.protocol = address.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(address.href);
  let queued = null;
  let closed = false;
  const s = {
    url,
    send(text) {
      if (ws.readyState === WebSocket.OPEN) ws.send(text);
      else queued = text;
    },
    close() {
      closed = true;
      ws.onopen = ws.onclose = ws.onerror = ws.onmessage = null;
      ws.close();
    },
  };
  const fail = () => {
    if (closed) return;
    s.close();
    onFail();
  };
  ws.onopen = () => {
    if (queued) ws.send(queued);
    queued = null;
  };
  ws.onmessage = (ev) => {
    let data;
    try {
      data = JSON.parse(ev.data);
    } catch {
      fail();
      return;
    }
    onMessage(data, fail);
  };
  ws.onclose = fail;
  ws.onerror = fail;
  return s;
}
