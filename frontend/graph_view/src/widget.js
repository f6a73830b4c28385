// The graph view as an anywidget (stockdemo/notebook): the same view as in the app, fed by
// the widget's model instead of Streamlit. The payload comes as the trait "payload" (JSON
// text); values go back by name: "selected", the id of the node the learner clicked, and
// "unroll", the rolled boxes to draw unrolled (stockdemo/notebook/__init__.py).
import graphView, { dropView } from "./index.js";
import "./style.css";

const SENT = ["selected", "unroll"]; // the widget's traits the view may set

export default {
  render({ model, el }) {
    el.classList.add("stockdemo-widget");
    // JupyterLab's shortcuts leave the view's own keys alone (+, −, 0, arrows, Space).
    el.dataset.lmSuppressShortcuts = "true";
    const component = {
      parentElement: el,
      setStateValue(key, value) {
        if (!SENT.includes(key)) return;
        model.set(key, value);
        model.save_changes();
      },
      setTriggerValue() {},
    };
    const draw = () => graphView({ ...component, data: model.get("payload") });
    draw();
    model.on("change:payload", draw);
    return () => {
      model.off("change:payload", draw);
      dropView(el); // the output may still be on the page: the view goes now, all the same
    };
  },
};
