// Rebuild the graph view's assets into the Python package: `npm ci && npm run build`.
// Output: stockdemo/ui/graph_view/graph_view.js and graph_view.css (committed, so the
// app runs offline with no Node at run time).
import { build } from "esbuild";

const outdir = "../../stockdemo/ui/graph_view";
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
  outdir,
});
await build({
  entryPoints: { graph_view: "src/style.css" },
  bundle: true,
  minify: true,
  banner: { css: banner },
  outdir,
});
