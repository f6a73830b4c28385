/* stockdemo's browser code, built from frontend/graph_view by `npm run build`.
   Do not edit: change frontend/graph_view/src and rebuild. */
function a(o){document.cookie=`${o.data.cookie}=; Max-Age=0; path=/`,window.location.reload()}export{a as default};
