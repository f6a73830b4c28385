// The teacher's keeper (stockdemo/ui/classmode/keeper.py's keep_teacher): the teacher's key
// lives in this tab's sessionStorage, never in a link (the address bar is on the
// projector). `data` is one of {save: "code:key"}, {forget: true} or {ask: true}; asked,
// the tab hands back the key it kept as the trigger `restored`.

import { TEACHER_KEY, TRIGGER } from "./protocol.js";

export default function (component) {
  const { data, setTriggerValue } = component;
  if (data && data.save) {
    sessionStorage.setItem(TEACHER_KEY, data.save);
  } else if (data && data.forget) {
    sessionStorage.removeItem(TEACHER_KEY);
  } else if (data && data.ask) {
    const saved = sessionStorage.getItem(TEACHER_KEY);
    if (saved) setTriggerValue(TRIGGER.restored, saved);
  }
}
