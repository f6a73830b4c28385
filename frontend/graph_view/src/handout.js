// A handed-out graph: the same view as in the app, drawn from the data inlined in
// the HTML file (stockdemo/render/handout.py writes it, and runs this once the page's first
// frame, with its poster of the same picture, is painted). Nothing goes back to a
// server: a selected node is shown here and goes nowhere else.
import graphView from "./index.js";

const graph = document.getElementById("graph");
const data = document.getElementById("stockdemo-data").textContent;
// One task: the poster leaves and the view draws in its place before the next paint.
graph.replaceChildren();
graphView({ parentElement: graph, data, setStateValue: () => {} });
