// One live instance (the graph view, the code editor) per component mount, kept across renders.
//
// Streamlit (components v2, BidiComponent) calls a component's function on every new payload,
// asynchronously. A render's cleanup is kept for the unmount, except when a newer render came
// before that render's call returned: then Streamlit calls its cleanup at once. That late call
// can land after the newer render has already updated the same instance, so a cleanup that
// always destroys would leave the page with an empty editor or graph until the next payload
// (seen on a loaded machine: a teacher's editor gone right after a run). A cleanup here acts
// only while its render is the last one of its mount.

/**
 * The instance mounted in `parentElement` (made by `create()` the first time) and this render's
 * cleanup: it destroys the instance only if no later render of the same mount has happened.
 * @template T
 * @param {WeakMap<Element, {instance: T, renders: number}>} instances
 * @param {Element} parentElement
 * @param {() => T & {destroy(): void}} create
 * @returns {[T, () => void]}
 */
export function mount(instances, parentElement, create) {
  let entry = instances.get(parentElement);
  if (!entry) {
    entry = { instance: create(), renders: 0 };
    instances.set(parentElement, entry);
  }
  const render = ++entry.renders;
  const cleanup = () => {
    if (instances.get(parentElement) !== entry || entry.renders !== render) return; // superseded
    instances.delete(parentElement);
    entry.instance.destroy();
  };
  return [entry.instance, cleanup];
}
