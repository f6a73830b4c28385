/* stockdemo's browser code, built from frontend/graph_view by `npm run build`.
   Do not edit: change frontend/graph_view/src and rebuild. */
var t="stockdemo.teacher";var o={pin:"pin",settled:"settled",missing:"missing",restored:"restored"};function c(r){let{data:e,setTriggerValue:n}=r;if(e&&e.save)sessionStorage.setItem(t,e.save);else if(e&&e.forget)sessionStorage.removeItem(t);else if(e&&e.ask){let s=sessionStorage.getItem(t);s&&n(o.restored,s)}}export{c as default};
