// The graph view: one object per component instance holding the view's state and its
// elements, built from the parts (toolbar, stage, camera, input, side panel, replay) and
// brought up to date by each payload from Python (stockdemo/render/payload.py's docstring).
//
// The parts are modules of functions over this object; each module's header names the
// fields it owns. Here: `data` (the payload), `p` (the picture prepared by picture.js),
// `newSet`, `colors`, the frame request and the elements of the graph's area.

import { resize } from "./box.js";
import { attachZoom, centerOn, screenBox } from "./camera.js";
import { el } from "./dom.js";
import { PRESENT_LABEL_PX } from "./draw.js";
import { Figures } from "./figures.js";
import { drawFrame } from "./frame.js";
import { glide, moves } from "./glide.js";
import { listen } from "./input.js";
import { pictureCame, register, requestRun, stopPacing } from "./pacing.js";
import { prepare } from "./picture.js";
import { SERVED_EVENT } from "./protocol.js";
import { pause, resetReplay, sayReplay, updateControls } from "./replay_controls.js";
import { buildReplay } from "./replay.js";
import { buildSide, showSelected } from "./side.js";
import { skipLink, takeCompare, takeStage } from "./stage.js";
import { Strip } from "./strip.js";
import { buildToolbar } from "./toolbar.js";
import { Words, relabel } from "./words.js";

/** The smallest text drawn in the graph (draw.js): presenting, what the back row reads. */
const labelMin = (data) => (data.stage?.present ? PRESENT_LABEL_PX : null);

export class GraphView {
  constructor(parent) {
    this.parent = parent;
    this.root = el("div", { class: "gv", "data-testid": "graph-view", "data-draws": "0" });
    this.figures = new Figures();
    this.strip = new Strip(() => requestRun(this));
    this.strip.root.hidden = true;
    this.req = 0;
    this.servedRun = 0; // the last Run of a learner's code drawn from the code's socket
    this.inflight = 0;
    this.pending = false;
    const bar = buildToolbar(this);
    this.status = el("div", { class: "gv-status", "aria-live": "polite" });
    this.main = el("div", { class: "gv-main" });
    this.main.append(this.buildStage(), buildSide(this));
    this.help = el("div", { class: "gv-help" });
    this.root.append(this.figures.root, this.strip.root, bar, this.status, this.main, this.help);
    parent.append(this.root);
    // For tests (documented in stockdemo/ui/graph_view.py): where a node is drawn now.
    this.root.gvScreenBox = (id, pane) => screenBox(this, id, pane);
    // ...and the boxes ringed as new since the previous run: [{id, op}].
    this.root.gvNew = () => [...(this.newSet ?? [])].map((i) => ({
      id: this.data.nodes.id[i], op: this.data.strings[this.data.nodes.op[i]] ?? null }));
    // ...and every node's centre as the last frame drew it, in canvas px: {id: [x, y]}.
    this.root.gvCentres = () => {
      const p = this.drawnP, t = this.drawnT, ids = this.drawnData?.nodes.id ?? [];
      return Object.fromEntries(ids.map((id, i) => [id, [t.x + p.x[i] * t.k, t.y + p.y[i] * t.k]]));
    };
    // ...and the rolled boxes a click unrolls (payload `folds`): their ids.
    this.root.gvFolds = () => (this.data?.folds?.node ?? []).map((i) => this.data.nodes.id[i]);

    // Opaque: every frame fills the background anyway, and a transparent canvas's first
    // frame cost several ms more to set up (a notebook output: 47 -> 37 ms to the picture).
    this.ctx = this.canvas.getContext("2d", { alpha: false });
    this.fitted = true;
    this.hover = -1;
    this.cursor = -1;
    this.selected = -1;
    this.mode = null;
    this.pos = 0;
    this.playing = false;
    this.draws = 0;
    this.frame = 0;
    this.size = [0, 0];
    attachZoom(this);
    listen(this);
    this.onFullscreen = () => {
      this.root.dataset.fullscreen = this.root.matches(":fullscreen") ? "1" : "0";
      resize(this);
    };
    this.root.dataset.fullscreen = "0";
    document.addEventListener("fullscreenchange", this.onFullscreen);
    this.observer = new ResizeObserver(() => resize(this));
    this.observer.observe(this.stage);
    // On a stage, a line appearing above the graph (the replay's status, the strip
    // wrapping) changes the height the graph may take: the whole view is watched.
    this.observer.observe(this.root);
    this.onWindowResize = () => resize(this);
    window.addEventListener("resize", this.onWindowResize);
    this.onServed = (ev) => this.takeServed(ev);
    window.addEventListener(SERVED_EVENT, this.onServed);
  }

  /** A Run of the learner's code answered on the code's socket (protocol.js SERVED_EVENT). */
  takeServed(ev) {
    if (!this.data?.stage?.served || !(ev.detail?.n > this.servedRun) || !ev.detail.data?.stage) return;
    ev.preventDefault();
    this.servedRun = ev.detail.n;
    this.servedSince = true;
    this.update(ev.detail.data);
  }

  /** A payload from the page's run: false when it answers an older Run than one the code's
   *  socket drew (its run was overtaken), or is the same payload again after one. */
  fromPage(hostData) {
    if (hostData === this.hostData && this.servedSince) return false;
    const data = typeof hostData === "string" ? JSON.parse(hostData) : hostData;
    if (data?.stage?.ran != null && data.stage.ran < this.servedRun) return false;
    this.hostData = hostData;
    this.servedSince = false;
    this.update(data);
    return true;
  }

  /** The graph's area: the canvas, compare mode's pane captions, the tooltip, Backward's ending. */
  buildStage() {
    this.stage = el("div", { class: "gv-stage" });
    this.canvas = el("canvas", { tabindex: "0", role: "application" });
    this.tip = el("div", { class: "gv-tip", role: "tooltip" });
    this.tip.hidden = true;
    // Where Backward ends: the error a second backward() raises, over the graph's foot.
    this.ending = el("div", { class: "gv-ending", role: "alert" });
    this.ending.append(el("div", { class: "gv-ending-head", "data-say": "freed_head" }));
    this.endingText = el("pre", { class: "gv-ending-text" });
    this.ending.append(this.endingText);
    this.ending.hidden = true;
    this.paneLabels = [el("div", { class: "gv-pane-label" }), el("div", { class: "gv-pane-label" })];
    for (const label of this.paneLabels) label.hidden = true;
    this.stage.append(this.canvas, ...this.paneLabels, this.tip, this.ending);
    return this.stage;
  }

  destroy() {
    stopPacing(this);
    pause(this);
    skipLink(this, false);
    this.observer.disconnect();
    window.removeEventListener("resize", this.onWindowResize);
    window.removeEventListener(SERVED_EVENT, this.onServed);
    document.removeEventListener("fullscreenchange", this.onFullscreen);
    this.root.remove();
  }

  /** A payload from Python: the picture, the stage, compare mode, the selection, the trace. */
  update(data) {
    this.root.dataset.updatedAt = performance.now().toFixed(1); // for bench/bench_stage.py
    const newGraph = !this.data || data.graph !== this.data.graph;
    const newTrace = newGraph || (data.trace?.key ?? null) !== (this.data?.trace?.key ?? null);
    const before = this.p && newGraph ? { p: this.drawnP || this.p, data: this.drawnData || this.data } : null;
    this.data = data;
    this.takeWords(data.words);
    register(this, data.stage);
    takeStage(this, data.stage);
    const cmpWas = !!this.cmp;
    takeCompare(this, data.compare);
    if (cmpWas !== !!this.cmp) this.fitted = true; // entering or leaving compare: fit both
    pictureCame(this, data, newGraph);
    if (newGraph) {
      this.p = prepare(data);
      const prev = this.motion;
      this.motion = null;
      if (before && moves() && !this.cmp) glide(this, before, prev);
      this.hover = -1;
      this.cursor = -1;
      this.root.dataset.graph = data.graph;
      this.root.dataset.nodes = String(this.p.n);
      this.root.dataset.folds = String(data.folds?.node?.length ?? 0);
      this.colors = null; // read after resize's layout below: one style pass, not two
    }
    this.newSet = new Set(data.new);
    this.selected = data.selected ?? -1;
    // The node the link names (a rolled box draws many nodes: its own id is one of them).
    this.root.dataset.selected = this.selected >= 0 ? (data.selected_node?.id ?? data.nodes.id[this.selected]) : "";
    showSelected(this);
    if (newTrace) resetReplay(this, buildReplay(data, this.p));
    this.replayBar.hidden = !this.rp;
    const help = this.words.say("help");
    this.help.textContent = data.new.length ? `${help} ${this.words.say("new_outline")}` : help;
    const resized = resize(this, newGraph || cmpWas !== !!this.cmp);
    if (newGraph) this.readColors();
    else if (this.colors.labelMin !== labelMin(data)) this.colors = { ...this.colors, labelMin: labelMin(data) };
    if (newGraph && this.selected >= 0 && !this.shownOnce) centerOn(this, this.selected);
    this.shownOnce = true;
    updateControls(this);
    // The first picture is drawn now, not at the next frame: a handout or a notebook's
    // output shows it a frame sooner. (Not in a box with no size yet: its resize draws.)
    if ((!this.draws || resized) && this.size[0] > 1 && this.size[1] > 1) this.drawNow();
  }

  /** The payload's words (words.js): the view's own are said again when its language changes. */
  takeWords(sent) {
    if (this.words && this.words.lang === (sent?.lang || "en")) return;
    this.words = new Words(sent);
    relabel(this.root, this.words);
    this.canvas.setAttribute("aria-roledescription", this.words.say("graph_role"));
    this.canvas.setAttribute("aria-label", `${this.words.say("canvas")} ${this.words.say("help")}`);
    sayReplay(this);
  }

  /** Draw at once: a new or resized canvas is blank until drawn, and no frame should show it so. */
  drawNow() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    drawFrame(this, performance.now());
  }

  /** The page's colours (Streamlit's theme variables) over the payload's. */
  readColors() {
    const cs = getComputedStyle(this.root);
    const v = (name, fallback) => cs.getPropertyValue(name).trim() || fallback;
    const c = this.data.colors;
    this.colors = {
      ...c,
      background: v("--st-background-color", "#FFFFFF"),
      text: v("--st-text-color", c.text),
      font: v("--st-font", "sans-serif").split(",")[0] ? v("--st-font", "sans-serif") : "sans-serif",
      labelMin: labelMin(this.data),
    };
  }

  /** Inside an animation frame (at `now`): the frame asked for is drawn in this one, not the next. */
  drawDue(now) {
    if (!this.frame) return;
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    drawFrame(this, now);
  }

  /** Ask for a frame (one at most per animation frame). */
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame((now) => {
      this.frame = 0;
      drawFrame(this, now);
    });
  }
}
