/* stockdemo's browser code, built from frontend/graph_view by `npm run build`.
   Do not edit: change frontend/graph_view/src and rebuild. */
function d(a){let t=(typeof a.data=="string"?JSON.parse(a.data):a.data)?.lang;t&&document.documentElement.lang!==t&&(document.documentElement.lang=t)}export{d as default};
