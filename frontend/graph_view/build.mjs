// Rebuild the graph view's assets: `npm ci && npm run build`.
// Output (committed, so the app runs offline with no Node at run time):
// static/graph_view.js, which Streamlit serves as a file (server.enableStaticServing),
// and stockdemo/ui/graph_view/graph_view.css, sent inline with the component.
import { build } from "esbuild";

const jsdir = "../../static";
const cssdir = "../../stockdemo/ui/graph_view";
const banner = "/* stockdemo graph view, built from frontend/graph_view by `npm run build`.\n"
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
  entryPoints: { graph_view: "src/style.css" },
  bundle: true,
  minify: true,
  banner: { css: banner },
  outdir: cssdir,
});
