// One live instance (the graph view, the code editor) per component mount, kept across renders.
//
// Streamlit (components v2, BidiComponent) calls a component's function on every new payload,
// from an effect, asynchronously (it first waits for the module). A render's cleanup is kept for
// the unmount, except when the render's effect was already replaced by a newer payload's: then
// Streamlit calls that cleanup at once, a few microtasks after the render returned. Two things
// follow, both seen on a loaded machine:
// - the calls can come out of order: the newer payload's first, the older one's after it. Applied
//   as they come, the older one would put back what the newer replaced (a student's editor
//   back to the seed while the teacher's code ran);
// - a superseded render's cleanup comes while the component is still on the page. A cleanup
//   that destroyed there left the page with an empty editor or graph.
// So a render's payload is applied a task later, and only if its cleanup has not come by then
// (a superseded render's comes first); and a cleanup destroys the instance only once the
// component's element has left the page (the unmount: React removes it before its effects'
// cleanups run). "A task later" is the next animation frame or a timer, whichever comes first:
// a frame already due runs before a timer, and a payload applied in it is drawn in it.

/**
 * Apply one render to the instance mounted in `parentElement` (made by `create()` the first
 * time, just before its first payload): `apply(instance, frameAt)` runs a task later unless this
 * render was superseded; `frameAt` is the animation frame's time when it runs in one, else
 * undefined. Returns the render's cleanup.
 * @template T
 * @param {WeakMap<Element | ShadowRoot, T & {destroy(): void}>} instances
 * @param {Element | ShadowRoot} parentElement
 * @param {() => T & {destroy(): void}} create
 * @param {(instance: T, frameAt?: number) => void} apply
 * @returns {() => void}
 */
export function mount(instances, parentElement, create, apply) {
  let superseded = false;
  let done = false;
  const run = (frameAt) => {
    if (done) return;
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
    if (superseded) return;
    let instance = instances.get(parentElement);
    if (!instance) {
      instance = create();
      instances.set(parentElement, instance);
    }
    apply(instance, frameAt);
  };
  const frame = requestAnimationFrame(run);
  const timer = setTimeout(() => run(undefined), 0);
  return () => {
    superseded = true;
    if (!parentElement.isConnected) unmount(instances, parentElement); // not while still shown
  };
}

/** Destroy the instance mounted in `parentElement`, if any (a host that says when it unmounts). */
export function unmount(instances, parentElement) {
  const instance = instances.get(parentElement);
  if (!instance) return;
  instances.delete(parentElement);
  instance.destroy();
}
