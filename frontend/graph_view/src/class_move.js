// The mover (stockdemo/ui/classmode/mover.py's draw_mover): this replica holds more than its
// share of the class, so the tab drops the balancer's affinity cookie (`data.cookie`,
// its name) and reloads; its class and seat are in its address.

export default function (component) {
  document.cookie = `${component.data.cookie}=; Max-Age=0; path=/`;
  window.location.reload();
}
