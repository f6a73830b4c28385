/* stockdemo's browser code, built from frontend/graph_view by `npm run build`.
   Do not edit: change frontend/graph_view/src and rebuild. */
function e(t){let n=t.data?.lang;n&&document.documentElement.lang!==n&&(document.documentElement.lang=n)}export{e as default};
