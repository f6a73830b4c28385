// stockdemo's graph view: a Streamlit components v2 frontend.
//
// The server sends a picture already laid out (positions in points, y down) and,
// when asked, the trace of the run; this file only draws, zooms (d3-zoom) and
// replays. The one value sent back is the selected node's id.

import { select } from "d3-selection";
import { zoom, zoomIdentity } from "d3-zoom";
import { drawPicture, hit, prepare, GRADIENT_STOPS, FONT_PT, LABEL_MIN_PX } from "./draw.js";
import { buildReplay, frameCount, lookAt } from "./replay.js";
import { Strip } from "./strip.js";
import { Figures } from "./figures.js";
import { MOTION_MS, between, cameraBetween, ease, ghosts, plan } from "./motion.js";
import { compareFit, paneAt, paneRects, rings } from "./compare.js";

const SPEEDS = [1, 2, 5, 10, 25, 100, 500]; // frames a second
const KEY_PAN_PX = 80;
const KEY_ZOOM = 1.25;

// A request the server has not answered in this long is taken as lost (a rerun
// interrupted by another, a dropped socket): the next value goes out anyway, and with
// no next value the same values go again, so the last value a learner picked is always
// drawn (seen once in a full test run on a slow box: T's third step sent, never drawn).
const REQUEST_TIMEOUT_MS = 4000;
// The learner has stopped when no value has been picked for this long: the page's
// panels under the stage then catch up (one run of their fragment, not one per value).
const SETTLE_MS = 300;
// A stage that follows a class's teacher settles later: the teacher's moves reach every
// follower of a server process at once, and each follower's panels running 300 ms after
// each move took the CPU the next followers' stages needed (bench/class_load.py). At 1 s,
// a teacher stepping T every 1.5 s still had 30 followers' panels run with each next
// move: 60 students, moves p50 0.51 -> 0.33 s, p95 0.63 -> 0.49 s at 2 s.
const FOLLOW_SETTLE_MS = 2000;
const MIN_BOX_PX = 260;
const FILL_SHARE = 0.45; // below this share of the window left under it, a view takes a screenful
// The stage's camera leaves this share of the box's width free for the graph to grow
// into: dragging T up then pans nothing and zooms out only every few steps.
const HEADROOM = 0.85;
// ...and zooms back in once the graph has shrunk to this share of what would fit.
const SHRUNK = 1 / 1.8;
const PAD = 12;
const PANE_GAP_HALF = 5;
const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

const HELP = "Wheel or pinch to zoom, drag to pan. Keys on the graph: + and − zoom, arrows pan, "
  + "0 fits, Shift+arrows move between nodes, Enter selects, Space plays the replay.";

const views = new WeakMap();

export default function graphView(component) {
  const { parentElement, setStateValue, setTriggerValue } = component;
  // The server sends the payload as JSON text (it encodes the picture once, not per rerun).
  const data = typeof component.data === "string" ? JSON.parse(component.data) : component.data;
  let view = views.get(parentElement);
  if (!view) {
    view = new GraphView(parentElement);
    views.set(parentElement, view);
  }
  view.setStateValue = setStateValue;
  view.setTriggerValue = setTriggerValue || (() => {});
  view.update(data);
  return () => {
    view.destroy();
    views.delete(parentElement);
  };
}

/** The graph views drawn as a stage on this page now (a page has one: the Playground's). */
function stages() {
  window.stockdemoStages ??= new Set();
  return window.stockdemoStages;
}

function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(act, text, label) {
  const b = el("button", { type: "button", "data-act": act, class: "gv-btn" }, text);
  if (label) {
    b.setAttribute("aria-label", label);
    b.title = label;
  }
  return b;
}

function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(2)} MB`;
}

function fmtNorm(v) {
  if (v === 0) return "0";
  return Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3 ? v.toExponential(2) : v.toPrecision(3);
}

class GraphView {
  constructor(parent) {
    this.parent = parent;
    this.root = el("div", { class: "gv", "data-testid": "graph-view", "data-draws": "0" });
    this.figures = new Figures();
    this.strip = new Strip(() => this.requestRun());
    this.strip.root.hidden = true;
    this.change = el("div", { class: "gv-change", "aria-live": "polite" });
    this.change.hidden = true;
    this.req = 0; // the last request for a run this view sent (the knobs state's "req")
    this.inflight = 0; // the request awaiting its answer, or 0
    this.pending = false; // a value was picked while a request was in flight
    const bar = el("div", { class: "gv-bar", role: "toolbar", "aria-label": "Graph view" });
    bar.append(
      button("fit", "Fit", "Fit the whole graph (key 0)"),
      button("zoomout", "−", "Zoom out (key −)"),
      button("zoomin", "+", "Zoom in (key +)"),
      button("fullscreen", "Fullscreen", "Fullscreen (key f)"),
    );
    // On a stage the view draws its own "Replay this run" toggle (Python computes the trace).
    this.replayToggle = button("replay", "Replay this run");
    this.replayToggle.classList.add("gv-toggle");
    this.replayToggle.hidden = true;
    this.pinButton = button("pin", "Pin as A");
    this.pinButton.hidden = true;
    this.keysButton = button("keys", "?", "Keys and gestures of the graph");
    this.keysButton.setAttribute("aria-expanded", "false");
    bar.append(this.replayToggle, this.pinButton);
    this.replayBar = el("span", { class: "gv-replay", role: "group", "aria-label": "Replay this run" });
    this.scrub = el("input", { type: "range", min: "0", max: "0", step: "1", value: "0",
      class: "gv-scrub", "aria-label": "Replay position" });
    this.speed = el("select", { class: "gv-speed", "aria-label": "Replay speed" });
    for (const s of SPEEDS) this.speed.append(el("option", { value: String(s) }, `${s} /s`));
    this.replayBar.append(
      button("forward", "● Record", "Replay the forward pass: nodes appear as autograd recorded them"),
      button("backward", "◀ Backward", "Replay backward(): the engine's real order, coloured by gradient norm"),
      button("prev", "|◀", "Step back (key ,)"),
      button("play", "▶ Play", "Play or pause (Space)"),
      button("next", "▶|", "Step forward (key .)"),
      this.scrub, this.speed,
    );
    bar.append(this.replayBar, this.change, this.keysButton);
    this.status = el("div", { class: "gv-status", "aria-live": "polite" });
    const main = el("div", { class: "gv-main" });
    this.stage = el("div", { class: "gv-stage" });
    this.canvas = el("canvas", { tabindex: "0", role: "application", "aria-roledescription": "graph",
      "aria-label": "Autograd graph. " + HELP });
    this.tip = el("div", { class: "gv-tip", role: "tooltip" });
    this.tip.hidden = true;
    // Where Backward ends: the error a second backward() raises, over the graph's foot.
    this.ending = el("div", { class: "gv-ending", role: "alert" });
    this.ending.append(el("div", { class: "gv-ending-head" },
      "The graph is freed. A second backward() raises:"));
    this.endingText = el("pre", { class: "gv-ending-text" });
    this.ending.append(this.endingText);
    this.ending.hidden = true;
    this.paneLabels = [el("div", { class: "gv-pane-label" }), el("div", { class: "gv-pane-label" })];
    for (const label of this.paneLabels) label.hidden = true;
    this.stage.append(this.canvas, ...this.paneLabels, this.tip, this.ending);
    this.side = el("aside", { class: "gv-side", "aria-label": "Selected node, forward code and replay" });
    this.side.hidden = true;
    this.selBox = el("section", { class: "gv-selected", "aria-label": "Selected node" });
    this.selBox.hidden = true;
    this.sideHead = el("div", { class: "gv-side-head" });
    this.code = el("ol", { class: "gv-code" });
    this.legend = el("div", { class: "gv-legend" });
    this.side.append(this.selBox, this.sideHead, this.code, this.legend);
    main.append(this.stage, this.side);
    this.help = el("div", { class: "gv-help" });
    this.root.append(this.figures.root, this.strip.root, bar, this.status, main, this.help);
    this.main = main;
    parent.append(this.root);
    // For tests (documented in stockdemo/ui/graph_view.py): where a node is drawn now.
    this.root.gvScreenBox = (id, pane) => this.screenBox(id, pane);

    this.ctx = this.canvas.getContext("2d");
    this.t = zoomIdentity;
    this.fitted = true; // the view follows the picture until the user zooms or pans
    this.hover = -1;
    this.cursor = -1;
    this.selected = -1;
    this.mode = null;
    this.pos = 0;
    this.playing = false;
    this.draws = 0;
    this.frame = 0;
    this.size = [0, 0];

    this.zoom = zoom()
      .scaleExtent([0.01, 8])
      .on("zoom", (ev) => {
        this.t = ev.transform;
        if (ev.sourceEvent) {
          this.fitted = false;
          if (this.motion) this.motion.userMoved = true;
        }
        this.schedule();
      });
    this.sel = select(this.canvas).call(this.zoom).on("dblclick.zoom", null);

    bar.onclick = (ev) => {
      const b = ev.target.closest("button");
      if (b) this.act(b.dataset.act);
    };
    this.scrub.oninput = () => {
      this.pause();
      this.pos = Number(this.scrub.value);
      this.schedule();
    };
    this.speed.onchange = () => this.canvas.focus({ preventScroll: true });
    this.canvas.onpointermove = (ev) => this.onHover(ev);
    this.canvas.onpointerleave = () => this.setHover(-1);
    this.canvas.onclick = (ev) => this.onClick(ev);
    this.canvas.onkeydown = (ev) => this.onKey(ev);
    this.onFullscreen = () => {
      this.root.dataset.fullscreen = this.root.matches(":fullscreen") ? "1" : "0";
      this.resize();
    };
    this.root.dataset.fullscreen = "0";
    document.addEventListener("fullscreenchange", this.onFullscreen);
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(this.stage);
    // On a stage, a line appearing above the graph (the replay's status, the strip
    // wrapping) changes the height the graph may take: the whole view is watched.
    this.observer.observe(this.root);
    this.onWindowResize = () => this.resize();
    window.addEventListener("resize", this.onWindowResize);
  }

  destroy() {
    stages().delete(this);
    this.pause();
    this.skipLink(false);
    clearTimeout(this.settleTimer);
    clearTimeout(this.lostTimer);
    this.observer.disconnect();
    window.removeEventListener("resize", this.onWindowResize);
    document.removeEventListener("fullscreenchange", this.onFullscreen);
    this.root.remove();
  }

  // -- data from Python ------------------------------------------------------
  update(data) {
    this.root.dataset.updatedAt = performance.now().toFixed(1); // for bench/bench_stage.py
    const newGraph = !this.data || data.graph !== this.data.graph;
    const newTrace = newGraph || (data.trace?.key ?? null) !== (this.data?.trace?.key ?? null);
    const before = this.p && newGraph ? { p: this.drawnP || this.p, data: this.drawnData || this.data } : null;
    this.data = data;
    // The stages on the page, for the watch under the stage (stockdemo/ui/stage.py): a
    // stage whose element Streamlit was sent but never drew is found missing, and asked again.
    if (data.stage) stages().add(this);
    else stages().delete(this);
    this.takeStage(data.stage);
    const cmpWas = !!this.cmp;
    this.takeCompare(data.compare);
    if (cmpWas !== !!this.cmp) this.fitted = true; // entering or leaving compare: fit both
    // The first picture came with the page's panels, drawn in the same run.
    if (this.settledGraph === undefined) this.settledGraph = data.graph;
    if (newGraph && data.stage && !this.inflight) {
      // A picture nobody here asked for (a class's teacher moved): settle on it too.
      clearTimeout(this.settleTimer);
      this.settleTimer = setTimeout(() => this.settle(), data.stage.locked ? FOLLOW_SETTLE_MS : SETTLE_MS);
    }
    if (newGraph) {
      this.p = prepare(data);
      this.motion = null;
      if (before && !reducedMotion?.matches && !this.cmp) {
        const pl = plan(before.p, before.data, this.p, data);
        this.motion = { plan: pl, ghost: ghosts(pl, before.p, before.data), old: before.data,
          start: null, frames: 0,
          camFrom: { k: this.drawnT?.k ?? this.t.k, x: this.drawnT?.x ?? this.t.x, y: this.drawnT?.y ?? this.t.y } };
      }
      this.hover = -1;
      this.cursor = -1;
      this.root.dataset.graph = data.graph;
      this.root.dataset.nodes = String(this.p.n);
      this.readColors();
    }
    this.newSet = new Set(data.new);
    this.selected = data.selected ?? -1;
    // The node the link names (a rolled box draws many nodes: its own id is one of them).
    this.root.dataset.selected = this.selected >= 0 ? (data.selected_node?.id ?? data.nodes.id[this.selected]) : "";
    this.showSelected();
    if (newTrace) {
      this.pause();
      this.rp = buildReplay(data, this.p);
      this.mode = null;
      this.pos = 0;
      this.buildCode();
    }
    this.replayBar.hidden = !this.rp;
    this.help.textContent = HELP + (data.new.length
      ? " Blue outline: new since the previous run." : "");
    this.resize(newGraph || cmpWas !== !!this.cmp);
    if (newGraph && this.selected >= 0 && !this.shownOnce) this.centerOn(this.selected);
    this.shownOnce = true;
    this.updateControls();
  }

  // -- the stage: live controls ---------------------------------------------------
  takeStage(stage) {
    const on = !!stage;
    this.root.classList.toggle("gv-staged", on);
    this.skipLink(on);
    this.strip.root.hidden = !on;
    this.change.hidden = !on || !stage.change || !!this.mode; // a replay's status says more
    this.figures.update(on ? stage.figures : null);
    this.root.classList.toggle("gv-presenting", on && !!stage.present);
    if (!on) return;
    if (this.inflight && stage.req >= this.inflight) this.inflight = 0;
    // While the learner's latest value is still on its way, their controls show it.
    this.strip.update(stage, this.inflight || this.pending);
    this.change.textContent = stage.change || "";
    this.root.dataset.req = String(stage.req);
    if (this.pending && !this.inflight) this.requestRun();
    this.pinButton.hidden = false;
    const offer = stage.replay !== null && stage.replay !== undefined;
    this.replayToggle.hidden = !offer;
    if (offer) {
      this.replayToggle.setAttribute("aria-pressed", stage.replay ? "true" : "false");
      this.replayToggle.title = stage.replay_help || "";
      this.replayToggle.disabled = false;
    }
  }

  // -- compare mode: run A pinned beside run B ------------------------------------------
  takeCompare(cmp) {
    const ds = this.root.dataset;
    if (!cmp) {
      this.cmp = null;
      ds.compare = "0";
      for (const label of this.paneLabels) label.hidden = true;
      this.pinButton.textContent = "Pin as A";
      this.pinButton.title = "Pin this run as A, then change the settings: A and B drawn one above the other";
      return;
    }
    const keep = this.cmp && this.cmp.data.graph === cmp.a.graph ? this.cmp.pa : prepare(cmp.a);
    this.cmp = { data: cmp.a, pa: keep, added: cmp.added, removed: cmp.removed, counts: cmp.counts };
    const c = cmp.counts;
    ds.compare = "1";
    ds.added = String(c.added_nodes);
    ds.removed = String(c.removed_nodes);
    ds.addedEdges = String(c.added_edges);
    ds.removedEdges = String(c.removed_edges);
    const plural = (n, w) => `${n.toLocaleString("en-US")} ${w}${n === 1 ? "" : "s"}`;
    this.paneLabels[0].textContent = `A · ${cmp.a_label} · ${plural(cmp.a.counts?.nodes ?? keep.n, "node")}`
      + ` · ${plural(c.removed_nodes, "node")} B lacks`;
    this.paneLabels[1].textContent = `B · ${cmp.b_label} · ${plural(this.data.counts?.nodes ?? 0, "node")}`
      + ` · ${plural(c.added_nodes, "node")} A lacks`;
    this.paneLabels[0].classList.add("gv-pane-a");
    this.paneLabels[1].classList.add("gv-pane-b");
    for (const label of this.paneLabels) label.hidden = false;
    this.pinButton.textContent = "Stop comparing";
    this.pinButton.title = "Unpin run A: back to one graph";
    this.change.hidden = false;
    this.change.textContent = `From A to B: ${plural(c.added_nodes, "node")} added, ${c.removed_nodes} removed; `
      + `${plural(c.added_edges, "edge")} added, ${c.removed_edges} removed.`;
  }

  /**
   * A stage page's first Tab stop: "Skip to the graph and its controls". It goes first
   * in the document, before Streamlit's sidebar, whose links stay Tab stops even while
   * it is closed (31 presses reached the graph without it); Enter lands on T.
   */
  skipLink(on) {
    if (!on) {
      this.skip?.remove();
      this.skip = null;
      return;
    }
    if (this.skip?.isConnected) return;
    if (!document.getElementById("gv-skip-style")) {
      const style = document.createElement("style");
      style.id = "gv-skip-style";
      style.textContent = ".gv-skip{position:fixed;left:-10000px;top:0.5rem;z-index:100000;"
        + "padding:0.4rem 0.8rem;border-radius:0.4rem;background:#0060A8;color:#fff;"
        + "font:600 1rem sans-serif;text-decoration:none}"
        + ".gv-skip:focus{left:0.5rem;outline:2px solid #1A1A1A;outline-offset:2px}";
      document.head.append(style);
    }
    document.querySelectorAll("a.gv-skip").forEach((old) => old.remove());
    const a = document.createElement("a");
    a.className = "gv-skip";
    a.href = "#";
    a.textContent = "Skip to the graph and its controls";
    a.onclick = (ev) => {
      ev.preventDefault();
      const first = this.strip.root.querySelector("input[type=range], select") || this.canvas;
      first.focus();
      first.scrollIntoView?.({ block: "nearest" });
    };
    document.body.prepend(a);
    this.skip = a;
  }

  /** Send the strip's values for a run, one request at a time; the last value always goes. */
  requestRun() {
    const now = performance.now();
    if (this.inflight && now - this.sentAt < REQUEST_TIMEOUT_MS) {
      this.pending = true;
      return;
    }
    this.req = Math.max(this.req, Number(this.data?.stage?.req) || 0) + 1;
    this.inflight = this.req;
    this.sentAt = now;
    this.pending = false;
    clearTimeout(this.lostTimer);
    const sent = this.req;
    this.lostTimer = setTimeout(() => {
      if (this.inflight !== sent) return; // answered, or a newer request went
      this.root.dataset.resent = String(Number(this.root.dataset.resent || 0) + 1);
      this.inflight = 0; // taken as lost: a timer a hair early must not find it still in time
      this.requestRun();
    }, REQUEST_TIMEOUT_MS);
    this.root.dataset.sent = String(this.req);
    this.root.dataset.sentAt = now.toFixed(1); // for bench/bench_stage.py
    this.setStateValue("knobs", { ...this.strip.values, req: this.req });
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.settle(), SETTLE_MS);
  }

  settle() {
    if (this.inflight || this.pending || this.strip.active) {
      this.settleTimer = setTimeout(() => this.settle(), SETTLE_MS);
      return;
    }
    // Once per picture: the panels follow what the stage shows, whoever moved it (the
    // learner, a preset, the teacher of a class the learner follows).
    if (this.settledGraph === this.data.graph) return;
    this.settledGraph = this.data.graph;
    // The page's panels follow (stockdemo/ui/stage.py's settle_listener reruns their
    // fragment); a page without panels has nothing left to bring up to date. The
    // picture is named: the server can tell one it sent that never arrived.
    window.dispatchEvent(new CustomEvent("stockdemo:settled",
      { detail: { req: this.req, graph: this.data.graph } }));
  }

  /** The box's height on a stage: what the viewport leaves below the view's top. */
  fillHeight() {
    // Streamlit scrolls its main area, not the window: found once (reading every
    // ancestor's computed style forces a style pass, on every update of a drag).
    if (!this.scroller?.isConnected) {
      const host = this.root.getRootNode().host || this.root.parentElement;
      let e = host;
      while (e && e !== document.body) {
        const oy = getComputedStyle(e).overflowY;
        if (oy === "auto" || oy === "scroll") break;
        e = e.parentElement || e.getRootNode().host;
      }
      this.scroller = e || document.body;
    }
    const scroller = this.scroller;
    const scrolled = scroller !== document.body ? scroller.scrollTop : window.scrollY;
    const top = this.main.getBoundingClientRect().top + scrolled;
    const rootTop = this.root.getBoundingClientRect().top + scrolled;
    const below = this.root.getBoundingClientRect().bottom - this.main.getBoundingClientRect().bottom;
    const left = Math.floor(window.innerHeight - top - below - 12);
    // Low on a page (its controls above it fill the first screen), a graph that filled what
    // is left would be a strip: it takes a screen's height instead, whole once scrolled to.
    if (!this.data.stage && left < FILL_SHARE * window.innerHeight) {
      const header = document.querySelector("[data-testid='stHeader']")?.offsetHeight || 0;
      return Math.max(MIN_BOX_PX, Math.floor(window.innerHeight - header - (top - rootTop) - below - 24));
    }
    return Math.max(MIN_BOX_PX, left);
  }

  readColors() {
    const cs = getComputedStyle(this.root);
    const v = (name, fallback) => cs.getPropertyValue(name).trim() || fallback;
    const c = this.data.colors;
    this.colors = {
      ...c,
      background: v("--st-background-color", "#FFFFFF"),
      text: v("--st-text-color", c.text),
      font: v("--st-font", "sans-serif").split(",")[0] ? v("--st-font", "sans-serif") : "sans-serif",
    };
  }

  // -- size, fit, zoom ---------------------------------------------------------
  resize(refit = false) {
    // A wide, flat picture gets a flatter box: no tall empty band under it.
    const wide = this.stage.getBoundingClientRect().width;
    const d = this.data;
    const fitH = Math.round(d.height * Math.min(2, (wide - 24) / Math.max(1, d.width)) + 24);
    let boxH = Math.max(MIN_BOX_PX, Math.min(d.box_height, fitH));
    // A stage's graph grows into its box; another page's keeps to what its picture needs.
    if (d.stage) boxH = this.fillHeight();
    else if (d.fill) boxH = Math.max(MIN_BOX_PX, Math.min(this.fillHeight(), fitH));
    if (document.fullscreenElement) boxH = null;
    const want = boxH === null ? "" : `${boxH}px`;
    if (this.root.style.getPropertyValue("--gv-height") !== want) {
      if (want) this.root.style.setProperty("--gv-height", want);
      else this.root.style.removeProperty("--gv-height");
    }
    const r = this.stage.getBoundingClientRect();
    const W = Math.max(1, Math.round(r.width)), H = Math.max(1, Math.round(r.height));
    let resized = false;
    const dpr = window.devicePixelRatio || 1;
    if (W !== this.size[0] || H !== this.size[1] || this.dpr !== dpr) {
      this.size = [W, H];
      this.dpr = dpr;
      this.canvas.width = Math.round(W * dpr);
      this.canvas.height = Math.round(H * dpr);
      this.canvas.style.width = `${W}px`;
      this.canvas.style.height = `${H}px`;
      resized = true;
    }
    // A new picture keeps the camera's scale if it can; a new box size fits afresh.
    if (this.fitted && resized) this.fit(null, true);
    else if (this.fitted && refit) this.fit(this.drawnT || this.t, true);
    else this.schedule();
  }

  fitTransform(keep = null) {
    const [W, H] = this.size;
    const d = this.data;
    if (this.cmp) {
      const f = compareFit(W, H, this.cmp.data, d, PAD, this.paneLabels[0].offsetHeight + 6);
      return zoomIdentity.translate(f.x, f.y).scale(f.k);
    }
    const kW = (W - 2 * PAD) / Math.max(d.width, 1), kH = (H - 2 * PAD) / Math.max(d.height, 1);
    if (!d.stage) {
      const k = Math.min(kW, kH, 2);
      return zoomIdentity.translate((W - d.width * k) / 2, (H - d.height * k) / 2).scale(k);
    }
    // A stage: time runs to the right from a fixed left edge, and the scale stays
    // what it was while the graph still fits and has not shrunk to a corner.
    const roomy = Math.min(kW * HEADROOM, kH, 2);
    let k = roomy;
    if (keep && keep.k <= Math.min(kW, kH, 2) && keep.k >= roomy * SHRUNK) k = keep.k;
    return zoomIdentity.translate(PAD, (H - d.height * k) / 2).scale(k);
  }

  fit(keep = null, glide = false) {
    const f = this.fitTransform(keep);
    this.zoom.scaleExtent([Math.min(f.k / 2, 0.5), 8]);
    if (glide && this.motion) this.motion.camTo = f;
    this.zoom.transform(this.sel, f);
    this.fitted = true;
  }

  centerOn(i) {
    const [W, H] = this.size;
    const k = Math.max(this.t.k, Math.min(1.2, 8));
    const p = this.p;
    this.zoom.transform(this.sel, zoomIdentity.translate(W / 2 - p.x[i] * k, H / 2 - p.y[i] * k).scale(k));
    this.fitted = false;
  }

  ensureVisible(i) {
    const [W, H] = this.size;
    const sx = this.p.x[i] * this.t.k + this.t.x, sy = this.p.y[i] * this.t.k + this.t.y;
    if (sx < 20 || sy < 20 || sx > W - 20 || sy > H - 20) {
      this.zoom.translateBy(this.sel, (W / 2 - sx) / this.t.k, (H / 2 - sy) / this.t.k);
      this.fitted = false;
    }
  }

  zoomBy(f) {
    this.zoom.scaleBy(this.sel, f, [this.size[0] / 2, this.size[1] / 2]);
    this.fitted = false;
  }

  panBy(dx, dy) {
    this.zoom.translateBy(this.sel, dx / this.t.k, dy / this.t.k);
    this.fitted = false;
  }

  // -- drawing -------------------------------------------------------------------
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame((now) => {
      this.frame = 0;
      this.tick(now);
    });
  }

  tick(now) {
    if (this.playing) {
      const dt = this.lastTick ? (now - this.lastTick) / 1000 : 0;
      this.lastTick = now;
      const n = frameCount(this.rp, this.mode);
      this.pos = Math.min(n, this.pos + dt * Number(this.speed.value));
      if (this.pos >= n) this.pause();
      this.scrub.value = String(Math.floor(this.pos));
    }
    this.draw(now);
    if (this.playing || this.motion) this.schedule();
  }

  draw(now = performance.now()) {
    const started = performance.now();
    const [W, H] = this.size;
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    let look = lookAt(this.rp, this.mode, this.pos, this.p, this.data);
    this.look = look;
    let p = this.p, data = this.data, cam = this.t;
    const m = this.motion;
    if (m) {
      if (m.start === null) m.start = now;
      const raw = Math.min(1, (now - m.start) / MOTION_MS);
      const u = ease(raw);
      ({ p, data } = between(m.plan, this.p, this.data, m.old, u));
      if (m.camTo && !m.userMoved) cam = cameraBetween(m.camFrom, m.camTo, [PAD, H / 2], u);
      const base = look, born = m.plan.born;
      look = { ...base, alpha: (i) => base.alpha(i) * (born[i] ? Math.max(0.05, u) : 1) };
      if (!m.ghost.empty && raw < 1) {
        const gt = { k: cam.k, x: cam.x, y: cam.y, dpr: this.dpr };
        ctx.globalAlpha = 1 - u;
        const fade = 1 - u;
        drawPicture(ctx, m.ghost.p, m.ghost.data, gt, [W, H], {
          alpha: () => fade, fill: () => null, edgeShown: () => true, current: -1, norm: null,
        }, { newSet: new Set(), hover: -1, selected: -1, cursor: -1, current: -1 }, this.colors);
        ctx.globalAlpha = 1;
      }
      m.frames += 1;
      if (raw >= 1) {
        const ms = now - m.start;
        this.root.dataset.motionMs = ms.toFixed(0);
        this.root.dataset.motionFrames = String(m.frames);
        this.root.dataset.motionFps = (ms > 0 ? (m.frames - 1) / (ms / 1000) : 0).toFixed(1);
        this.motion = null;
        p = this.p;
        data = this.data;
        cam = this.t;
        look = this.look;
      }
    }
    const t = { k: cam.k, x: cam.x, y: cam.y, dpr: this.dpr };
    // Comparing, B's additions are ringed against A: "new since the previous run" would repeat it.
    const marks = { newSet: this.cmp ? new Set() : this.newSet, hover: this.hover, selected: this.selected,
      cursor: this.cursor, current: look.current };
    if (this.cmp) this.drawCompare(ctx, t, look, marks);
    else drawPicture(ctx, p, data, t, [W, H], look, marks, this.colors);
    this.drawnP = p;
    this.drawnData = data;
    this.drawnT = t;
    this.draws += 1;
    const ds = this.root.dataset;
    ds.moving = this.motion ? "1" : "0";
    ds.draws = String(this.draws);
    ds.scale = t.k.toFixed(4);
    ds.tx = t.x.toFixed(2);
    ds.ty = t.y.toFixed(2);
    ds.labels = FONT_PT * t.k >= LABEL_MIN_PX ? "1" : "0";
    ds.mode = this.mode || "";
    ds.frame = String(Math.floor(this.pos));
    ds.frames = this.rp && this.mode ? String(frameCount(this.rp, this.mode)) : "0";
    ds.playing = this.playing ? "1" : "0";
    this.updateReplayText(look);
    // For tests and bench/bench_browser.py: which picture is on screen, and when it was drawn.
    ds.drawnGraph = this.data.graph;
    ds.drawnAt = performance.now().toFixed(1);
    ds.drawMs = (ds.drawnAt - started).toFixed(1);
  }

  /** Both runs, A above B, one camera; B's additions and A's losses ringed in their colours. */
  drawCompare(ctx, t, look, marks) {
    const [W, H] = this.size;
    const panes = paneRects(W, H);
    this.panes = panes;
    const c = this.cmp, colors = this.colors;
    const idA = (i) => c.pa.index.get(this.data.nodes.id[i]) ?? -1;
    const still = { alpha: () => 1, fill: () => null, edgeShown: () => true, current: -1, norm: null };
    const sides = [
      [c.pa, c.data, still, { newSet: new Set(), hover: marks.hover >= 0 ? idA(marks.hover) : -1,
        selected: marks.selected >= 0 ? idA(marks.selected) : -1, cursor: -1, current: -1 }, c.removed,
        colors.removed],
      [this.p, this.data, look, marks, c.added, colors.added],
    ];
    sides.forEach(([p, data, lk, mk, ringed, color], j) => {
      const r = panes[j];
      const pt = { k: t.k, x: t.x + r.x, y: t.y + r.y, dpr: this.dpr };
      ctx.save();
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.beginPath();
      ctx.rect(r.x * this.dpr, r.y * this.dpr, r.w * this.dpr, r.h * this.dpr);
      ctx.clip();
      drawPicture(ctx, p, data, pt, [r.x + r.w, r.y + r.h], lk, mk, colors);
      ctx.setTransform(this.dpr * pt.k, 0, 0, this.dpr * pt.k, this.dpr * pt.x, this.dpr * pt.y);
      rings(ctx, p, ringed, color, pt.k, 3.5, 3);
      ctx.restore();
      const label = this.paneLabels[j];
      label.style.top = `${r.y + 2}px`;
    });
    ctx.save();
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = colors.border;
    ctx.fillRect(0, panes[1].y - PANE_GAP_HALF, W, 1);
    ctx.restore();
  }

  /**
   * The box of node `id` as drawn on the last frame, in client (viewport) pixels, or null.
   * In compare mode `pane` picks "a" or "b" (the default).
   */
  screenBox(id, pane = "b") {
    const inA = this.cmp && pane === "a";
    const p = inA ? this.cmp.pa : this.drawnP || this.p, t = this.drawnT || this.t;
    const i = p.index.get(id);
    if (i === undefined) return null;
    const r = this.canvas.getBoundingClientRect();
    const off = this.cmp && this.panes ? this.panes[inA ? 0 : 1] : { x: 0, y: 0 };
    const k = t.k;
    return { x: r.left + off.x + t.x + (p.x[i] - p.w[i] / 2) * k,
      y: r.top + off.y + t.y + (p.y[i] - p.h[i] / 2) * k, width: p.w[i] * k, height: p.h[i] * k };
  }

  // -- pointer and keyboard ------------------------------------------------------
  /** The node of run B under the pointer (in compare mode, A's pane names B's node of that id). */
  pick(ev) {
    const r = this.canvas.getBoundingClientRect();
    let px = ev.clientX - r.left, py = ev.clientY - r.top;
    let p = this.p, inA = false;
    if (this.cmp && this.panes) {
      const j = paneAt(this.panes, py);
      if (j < 0) return -1;
      px -= this.panes[j].x;
      py -= this.panes[j].y;
      inA = j === 0;
      if (inA) p = this.cmp.pa;
    }
    const [wx, wy] = this.t.invert([px, py]);
    const slop = (ev.pointerType === "touch" || ev.sourceCapabilities?.firesTouchEvents ? 10 : 3) / this.t.k;
    const i = hit(p, wx, wy, slop);
    if (!inA || i < 0) return i;
    return this.p.index.get(this.cmp.data.nodes.id[i]) ?? -1; // a node B lacks: nothing to select
  }

  onHover(ev) {
    if (ev.buttons) return;
    this.setHover(this.pick(ev), ev);
  }

  setHover(i, ev) {
    if (i !== this.hover) {
      this.hover = i;
      this.root.dataset.hover = i >= 0 ? this.data.nodes.id[i] : "";
      this.schedule();
    }
    if (i >= 0) this.showTip(i, ev);
    else if (this.cursor < 0) this.tip.hidden = true;
  }

  onClick(ev) {
    const i = this.pick(ev);
    if (i >= 0) {
      this.setHover(i, ev);
      this.select(i);
    } else if (this.selected >= 0) {
      this.select(-1);
    }
  }

  select(i) {
    this.selected = i;
    const id = i >= 0 ? this.data.nodes.id[i] : null;
    this.root.dataset.selected = id || "";
    this.showSelected();
    this.schedule();
    this.setStateValue("selected", id);
  }

  onKey(ev) {
    const k = ev.key;
    let handled = true;
    if (ev.shiftKey && k.startsWith("Arrow")) this.moveCursor(k);
    else if (k === "+" || k === "=") this.zoomBy(KEY_ZOOM);
    else if (k === "-" || k === "_") this.zoomBy(1 / KEY_ZOOM);
    else if (k === "0") this.fit();
    else if (k === "ArrowLeft") this.panBy(KEY_PAN_PX, 0);
    else if (k === "ArrowRight") this.panBy(-KEY_PAN_PX, 0);
    else if (k === "ArrowUp") this.panBy(0, KEY_PAN_PX);
    else if (k === "ArrowDown") this.panBy(0, -KEY_PAN_PX);
    else if (k === "Enter" && this.cursor >= 0) this.select(this.cursor);
    else if ((k === " " || k === "Enter") && this.rp) this.act("play");
    else if (k === "," && this.rp) this.act("prev");
    else if (k === "." && this.rp) this.act("next");
    else if (k === "f") this.act("fullscreen");
    else if (k === "Escape" && this.cursor >= 0) {
      this.cursor = -1;
      this.tip.hidden = true;
      this.schedule();
    } else handled = false;
    if (handled) {
      ev.preventDefault();
      ev.stopPropagation();
    }
  }

  /** Shift+arrow: the nearest node in that direction (the first key picks the one in view). */
  moveCursor(key) {
    const p = this.p;
    const [W, H] = this.size;
    if (this.cursor < 0) {
      const [cx, cy] = this.t.invert([W / 2, H / 2]);
      let best = -1, bestD = Infinity;
      for (let i = 0; i < p.n; i++) {
        const d = Math.hypot(p.x[i] - cx, p.y[i] - cy);
        if (d < bestD) { bestD = d; best = i; }
      }
      this.cursor = best;
    } else {
      const [dx, dy] = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[key];
      const c = this.cursor;
      let best = -1, bestD = Infinity;
      for (let i = 0; i < p.n; i++) {
        if (i === c) continue;
        const vx = p.x[i] - p.x[c], vy = p.y[i] - p.y[c];
        const along = vx * dx + vy * dy;
        if (along <= 1) continue;
        const across = Math.abs(vx * dy - vy * dx);
        const d = along + 2 * across;
        if (d < bestD) { bestD = d; best = i; }
      }
      if (best >= 0) this.cursor = best;
    }
    if (this.cursor >= 0) {
      this.ensureVisible(this.cursor);
      this.root.dataset.cursor = this.data.nodes.id[this.cursor];
      this.showTip(this.cursor);
    }
    this.schedule();
  }

  // -- details -------------------------------------------------------------------
  /** What box `i` stands for when it draws more than its own node (a rolled block, a fold). */
  standsFor(i) {
    const sf = this.data.stands_for;
    if (!sf || !sf.node) return null;
    if (!this.standsIndex || this.standsIndex.data !== this.data) {
      this.standsIndex = { data: this.data, map: new Map(sf.node.map((n, j) => [n, sf.text[j]])) };
    }
    return this.standsIndex.map.get(i) ?? null;
  }

  details(i) {
    const d = this.data, nd = d.nodes, tr = d.trace, p = this.p;
    const rows = [];
    const add = (k, v) => { if (v !== null && v !== undefined && v !== "") rows.push([k, String(v)]); };
    // The selected box may draw many nodes (rolled): the details name the node the
    // link names, with its own step, and say what the box stands for.
    const named = i === this.selected && d.selected_node ? d.selected_node : null;
    add("node", named ? named.id : nd.id[i]);
    add("op", p.op[i]);
    add("parameter", named ? named.param : p.param[i]);
    add("output shape", named ? named.shape : p.shape[i]);
    const step = named ? named.step : nd.step[i], layer = named ? named.layer : nd.layer[i];
    if (step !== null || layer !== null) add("step, layer", `t ${step ?? "–"}, layer ${layer ?? "–"}`);
    add("stands for", named ? named.stands_for : this.standsFor(i));
    if (tr) {
      const s = tr.saved_n[i];
      if (s >= 0) add("saved for backward", `${s} tensor${s === 1 ? "" : "s"}, ${fmtBytes(tr.saved_bytes[i])}`);
      const line = tr.source[i];
      if (line >= 0) {
        const L = tr.lines[line];
        add("created by", `${L.file}:${L.line} (${L.function})  ${L.text}`);
      }
    }
    const norm = this.look && this.look.norm && this.look.norm.get(i);
    if (norm !== undefined && norm !== null) {
      add(p.param[i] ? "‖.grad‖" : "‖incoming grad‖", fmtNorm(norm));
    }
    if (this.newSet.has(i)) add("new", "since the previous run");
    return rows;
  }

  showTip(i, ev) {
    const tip = this.tip;
    tip.replaceChildren();
    const title = el("div", { class: "gv-tip-title" }, this.p.label[i].split("\n")[0]);
    const dl = el("dl");
    for (const [k, v] of this.details(i)) dl.append(el("dt", {}, k), el("dd", {}, v));
    tip.append(title, dl);
    tip.hidden = false;
    const [W, H] = this.size;
    let sx, sy;
    if (ev && ev.clientX !== undefined) {
      const r = this.canvas.getBoundingClientRect();
      sx = ev.clientX - r.left;
      sy = ev.clientY - r.top;
    } else {
      sx = this.p.x[i] * this.t.k + this.t.x;
      sy = (this.p.y[i] + this.p.h[i] / 2) * this.t.k + this.t.y;
    }
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    tip.style.left = `${Math.max(4, Math.min(W - tw - 4, sx + 14))}px`;
    tip.style.top = `${sy + 14 + th > H ? Math.max(4, sy - th - 10) : sy + 14}px`;
  }

  // -- replay ----------------------------------------------------------------------
  act(a) {
    if (a === "pin") {
      this.setTriggerValue("pin", this.cmp ? "unpin" : "pin");
      return;
    }
    if (a === "keys") {
      const open = this.keysButton.getAttribute("aria-expanded") !== "true";
      this.keysButton.setAttribute("aria-expanded", open ? "true" : "false");
      this.root.classList.toggle("gv-keys-open", open);
      this.resize();
      return;
    }
    if (a === "replay") {
      const on = this.replayToggle.getAttribute("aria-pressed") !== "true";
      this.replayToggle.setAttribute("aria-pressed", on ? "true" : "false");
      this.replayToggle.disabled = true; // until the run with hooks comes back
      this.setStateValue("replay", on);
      return;
    }
    if (a === "fit") this.fit();
    else if (a === "zoomin") this.zoomBy(KEY_ZOOM);
    else if (a === "zoomout") this.zoomBy(1 / KEY_ZOOM);
    else if (a === "fullscreen") this.toggleFullscreen();
    else if (!this.rp) return;
    else if (a === "forward" || a === "backward") this.start(a);
    else if (a === "play") {
      if (!this.mode) this.start("forward");
      else if (this.playing) this.pause();
      else this.play();
    } else if (a === "prev" || a === "next") {
      if (!this.mode) this.mode = "forward";
      this.pause();
      const n = frameCount(this.rp, this.mode);
      this.pos = a === "next" ? Math.min(n, Math.floor(this.pos) + 1) : Math.max(0, Math.ceil(this.pos) - 1);
      this.updateControls();
      this.schedule();
    }
  }

  start(mode) {
    this.mode = mode;
    this.change.hidden = true;
    this.pos = 0;
    const n = frameCount(this.rp, mode);
    // About eight seconds whatever the size, never slower than 5 frames a second.
    const want = Math.max(5, n / 8);
    this.speed.value = String(SPEEDS.find((s) => s >= want) || SPEEDS[SPEEDS.length - 1]);
    this.buildCode();
    this.play();
  }

  play() {
    const n = frameCount(this.rp, this.mode);
    if (this.pos >= n) this.pos = 0;
    this.playing = true;
    this.lastTick = 0;
    this.updateControls();
    this.schedule();
  }

  pause() {
    if (!this.playing) return;
    this.playing = false;
    this.updateControls();
  }

  updateControls() {
    const play = this.root.querySelector("[data-act=play]");
    play.textContent = this.playing ? "Pause" : "▶ Play";
    play.setAttribute("aria-pressed", this.playing ? "true" : "false");
    for (const m of ["forward", "backward"]) {
      this.root.querySelector(`[data-act=${m}]`).setAttribute("aria-pressed", this.mode === m ? "true" : "false");
    }
    if (this.rp) {
      this.scrub.max = String(this.mode ? frameCount(this.rp, this.mode) : 0);
      this.scrub.value = String(Math.floor(this.pos));
    }
    this.root.dataset.playing = this.playing ? "1" : "0";
  }

  toggleFullscreen() {
    if (document.fullscreenElement) document.exitFullscreen();
    else this.root.requestFullscreen?.().catch(() => {});
    this.canvas.focus({ preventScroll: true });
  }

  buildCode() {
    const tr = this.data.trace;
    this.code.replaceChildren();
    this.legend.replaceChildren();
    this.showSide();
    if (!tr) return;
    this.codeItems = tr.code.map((li) => {
      const L = tr.lines[li];
      // Indented by padding, not spaces: a long line wraps under its own start.
      const item = el("li", { value: String(L.line) });
      item.style.setProperty("--indent", `${L.indent || 0}ch`);
      item.append(el("code", {}, L.text));
      this.code.append(item);
      return item;
    });
    if (this.mode === "backward") {
      const bar = el("div", { class: "gv-ramp" });
      bar.style.background = `linear-gradient(to right, ${GRADIENT_STOPS.join(",")})`;
      const lo = el("span", {}, fmtNorm(10 ** this.rp.lo)), hi = el("span", {}, fmtNorm(10 ** this.rp.hi));
      this.legend.append(el("div", {}, "gradient norm (log scale)"), bar, el("div", { class: "gv-ramp-ends" }));
      this.legend.lastChild.append(lo, hi);
    }
  }

  /** The side panel holds the selected node's details and, while replaying, the code. */
  showSide() {
    const replaying = !!(this.rp && this.mode);
    for (const e of [this.sideHead, this.code, this.legend]) e.hidden = !replaying;
    if (!replaying) {
      this.ending.hidden = true;
      this.root.dataset.ending = "0";
    }
    const had = !this.side.hidden;
    this.side.hidden = !replaying && this.selected < 0;
    if (had !== !this.side.hidden) this.resize();
  }

  showSelected() {
    const i = this.selected;
    this.selBox.replaceChildren();
    this.selBox.hidden = i < 0;
    if (i >= 0) {
      const named = this.data.selected_node;
      const title = named ? named.id : this.p.label[i].split("\n")[0];
      this.selBox.append(el("div", { class: "gv-side-head" }, `Selected: ${title}`));
      const dl = el("dl");
      for (const [k, v] of this.details(i)) dl.append(el("dt", {}, k), el("dd", {}, v));
      this.selBox.append(dl);
    }
    this.showSide();
  }

  updateReplayText(look) {
    if (!this.rp || !this.mode) {
      this.status.textContent = "";
      this.root.dataset.status = "";
      return;
    }
    const tr = this.rp.tr, nd = this.data.nodes;
    const n = frameCount(this.rp, this.mode);
    const done = Math.ceil(this.pos) - 1;
    let text;
    let line = -1;
    let step = null;
    const words = tr.status || {};
    const fill = (template, k, fallback) => (template ? template.replace("{done}", String(k)) : fallback);
    if (this.mode === "forward") {
      const k = Math.max(0, done + 1);
      text = fill(words.forward, k, `Record (forward): ${k} of ${n} nodes created`);
      if (k >= n && words.forward_end) text += ` · ${words.forward_end}`;
      if (done >= 0) {
        text += ` · ${nd.id[tr.forward[done]]}`;
        line = tr.forward_line[done];
        step = tr.forward_step[done];
        if (step !== null && step >= 0) text += ` · loop step t = ${step}`;
      }
      this.sideHead.textContent = step !== null && step >= 0
        ? `forward(): the loop at step t = ${step}` : "forward(): the line running now";
    } else {
      const B = tr.backward.length;
      const k = Math.min(Math.max(0, done + 1), B);
      text = fill(words.backward, k, `Backward of ${tr.root}: ${k} of ${B} nodes run`);
      if (done >= 0 && done < B) {
        text += ` · ${nd.id[tr.backward[done]]} · ‖grad‖ ${fmtNorm(tr.backward_norm[done])}`;
        line = tr.source[tr.backward[done]]; // the forward line whose op is being undone
      } else if (done >= B) {
        text += ` · ${words.backward_end || "parameters hold their .grad"}`;
      }
      this.sideHead.textContent = `backward() of ${tr.root}: the line that made the node it runs now`;
      // The punchline, read whole: torch's own error, across the graph, not in the side panel.
      const freed = done >= B + 1;
      this.ending.hidden = !freed;
      this.root.dataset.ending = freed ? "1" : "0";
      if (freed) {
        this.endingText.textContent = tr.error;
        text += " · graph freed";
      }
    }
    this.showSide();
    this.status.textContent = text;
    this.root.dataset.status = text;
    if (this.codeItems) {
      this.codeItems.forEach((item, j) => item.classList.toggle("gv-now", tr.code[j] === line));
      const now = line >= 0 ? this.codeItems[tr.code.indexOf(line)] : null;
      // Scroll the panel only: scrollIntoView would scroll the page too.
      if (now && this.lastLine !== line) {
        const top = now.offsetTop - this.code.offsetTop;
        if (top < this.code.scrollTop || top + now.offsetHeight > this.code.scrollTop + this.code.clientHeight) {
          this.code.scrollTop = top - this.code.clientHeight / 3;
        }
      }
      this.lastLine = line;
    }
  }
}
