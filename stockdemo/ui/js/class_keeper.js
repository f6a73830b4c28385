/* stockdemo's browser code, built from frontend/graph_view by `npm run build`.
   Do not edit: change frontend/graph_view/src and rebuild. */
var t="stockdemo.teacher";var s={pin:"pin",settled:"settled",missing:"missing",restored:"restored"};function E(r){let{data:e,setTriggerValue:n}=r;if(e&&e.save)sessionStorage.setItem(t,e.save);else if(e&&e.forget)sessionStorage.removeItem(t);else if(e&&e.ask){let o=sessionStorage.getItem(t);o&&n(s.restored,o)}}export{E as default};
