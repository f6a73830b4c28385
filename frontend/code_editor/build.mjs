// Rebuild the editor's assets: `npm ci && npm run build`.
// Output (committed, so the app runs offline with no Node at run time):
// static/code_editor.js, which Streamlit serves as a file (server.enableStaticServing),
// and stockdemo/ui/code_editor/code_editor.css, sent inline with the component.
import { build } from "esbuild";

const banner = "/* stockdemo code editor, built from frontend/code_editor by `npm run build`.\n"
  + "   Do not edit: change frontend/code_editor/src and rebuild. */";

await build({
  entryPoints: { code_editor: "src/index.js" },
  bundle: true,
  format: "esm",
  minify: true,
  target: ["es2020"],
  legalComments: "eof",
  banner: { js: banner },
  outdir: "../../static",
});
await build({
  entryPoints: { code_editor: "src/style.css" },
  bundle: true,
  minify: true,
  banner: { css: banner },
  outdir: "../../stockdemo/ui/code_editor",
});
