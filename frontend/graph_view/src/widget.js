// The graph view as an anywidget (stockdemo/notebook): the same view as in the app, fed by
// the widget's model instead of Streamlit. The payload comes as the trait "payload" (JSON
// text); one value goes back, "selected", the id of the node the learner clicked.
import graphView from "./index.js";
import "./style.css";

export default {
  render({ model, el }) {
    el.classList.add("stockdemo-widget");
    // JupyterLab's shortcuts leave the view's own keys alone (+, −, 0, arrows, Space).
    el.dataset.lmSuppressShortcuts = "true";
    const component = {
      parentElement: el,
      setStateValue(key, value) {
        if (key !== "selected") return;
        model.set("selected", value);
        model.save_changes();
      },
      setTriggerValue() {},
    };
    let destroy = null;
    const draw = () => {
      destroy = graphView({ ...component, data: model.get("payload") });
    };
    draw();
    model.on("change:payload", draw);
    return () => {
      model.off("change:payload", draw);
      destroy?.();
    };
  },
};
