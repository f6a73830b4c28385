// A handed-out graph: the same view as in the app, drawn from the data inlined in
// the HTML file (stockdemo/handout.py writes it). Nothing goes back to a server:
// a selected node is shown here and goes nowhere else.
import graphView from "./index.js";

const graph = document.getElementById("graph");
const poster = graph.querySelector("[data-testid='graph-poster']");

function start() {
  const data = document.getElementById("stockdemo-data").textContent;
  // One task: the poster leaves and the view draws in its place before the next paint.
  graph.replaceChildren();
  graphView({ parentElement: graph, data, setStateValue: () => {} });
}

// The file's poster (stockdemo/poster.py, the same picture as an SVG) is painted with the
// page, not after this script's 45 ms: the view is built once that frame is on screen.
if (poster) requestAnimationFrame(() => setTimeout(start, 0));
else start();
