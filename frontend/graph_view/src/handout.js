// A handed-out graph: the same view as in the app, drawn from the data inlined in
// the HTML file (stockdemo/handout.py writes it). Nothing goes back to a server:
// a selected node is shown here and goes nowhere else.
import graphView from "./index.js";

const data = document.getElementById("stockdemo-data").textContent;
graphView({
  parentElement: document.getElementById("graph"),
  data,
  setStateValue: () => {},
});
