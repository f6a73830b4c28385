// The settle listener, drawn first inside the fragment of a stage page's panels
// (stockdemo/ui/stage.py's settle_listener). It turns the stage's SETTLED_EVENT into its
// trigger `settled`, so only that fragment reruns once the learner stops.
//
// It also watches the stage: drawn after it in the same run, if `builtWith().watch_ms`
// later no graph view is drawn as a stage and the view's code is not still loading, it
// says `missing` and the page runs again whole (an element sent and never drawn).

import { mount } from "./mounts.js";
import { BUNDLE, SETTLED_EVENT, STAGES, TRIGGER, builtWith } from "./protocol.js";

const listening = new WeakMap();

class Listener {
  constructor() {
    this.on = (ev) => this.trigger(TRIGGER.settled, ev.detail ?? true);
    window.addEventListener(SETTLED_EVENT, this.on);
  }

  destroy() {
    clearTimeout(this.watch);
    window.removeEventListener(SETTLED_EVENT, this.on);
  }
}

export default function (component) {
  const { parentElement, setTriggerValue } = component;
  const watchMs = builtWith().watch_ms;
  return mount(listening, parentElement, () => new Listener(), (entry) => {
    entry.trigger = setTriggerValue;
    clearTimeout(entry.watch);
    const look = () => {
      if (window[STAGES]?.size) return;
      if (window[BUNDLE] === "loading") {
        entry.watch = setTimeout(look, watchMs);
        return;
      }
      entry.trigger(TRIGGER.missing, true);
    };
    entry.watch = setTimeout(look, watchMs);
  });
}
