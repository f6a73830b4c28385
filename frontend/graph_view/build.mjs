// Rebuild the graph view's assets: `npm ci && npm run build`.
// Output (committed, so the app runs offline with no Node at run time):
// static/graph_view.js, which Streamlit serves as a file (server.enableStaticServing),
// and stockdemo/ui/graph_view/graph_view.css, sent inline with the component;
// stockdemo/ui/graph_view/handout.js, the same view as a plain script that draws the
// data inlined in a handed-out HTML file (stockdemo/handout.py inlines it and the CSS);
// stockdemo/ui/js/*.js, the modules of the page's small components (the view's loader,
// the settle listener, the class mode's mover and keeper, the page's language), which Python reads as text
// (stockdemo/ui/assets.py).
// stockdemo/notebook/widget.js and widget.css, the view as an anywidget (one module).
import { build } from "esbuild";

const jsdir = "../../static";
const cssdir = "../../stockdemo/ui/graph_view";
const componentdir = "../../stockdemo/ui/js";
const banner = "/* stockdemo's browser code, built from frontend/graph_view by `npm run build`.\n"
  + "   Do not edit: change frontend/graph_view/src and rebuild. */";

await build({
  entryPoints: { graph_view: "src/index.js" },
  bundle: true,
  format: "esm",
  minify: true,
  target: ["es2020"],
  legalComments: "eof",
  banner: { js: banner },
  outdir: jsdir,
});
await build({
  entryPoints: {
    loader: "src/loader.js",
    settle: "src/settle.js",
    class_move: "src/class_move.js",
    class_keeper: "src/class_keeper.js",
    html_lang: "src/html_lang.js",
  },
  bundle: true,
  format: "esm",
  minify: true,
  target: ["es2020"],
  banner: { js: banner },
  outdir: componentdir,
});
await build({
  entryPoints: { handout: "src/handout.js" },
  bundle: true,
  format: "iife",
  minify: true,
  target: ["es2020"],
  legalComments: "eof",
  banner: { js: banner },
  outdir: cssdir,
});
await build({
  entryPoints: { graph_view: "src/style.css" },
  bundle: true,
  minify: true,
  banner: { css: banner },
  outdir: cssdir,
});
await build({
  entryPoints: { widget: "src/widget.js" },
  bundle: true,
  format: "esm",
  minify: true,
  target: ["es2020"],
  legalComments: "eof",
  banner: { js: banner, css: banner },
  outdir: "../../stockdemo/notebook",
});
