#!/usr/bin/env node
// Builds the playground page (src/playground) into dist/playground with esbuild: one script and one
// stylesheet, minified, no source from outside the project's own files and dependencies (nothing
// is fetched when the page runs). `npm run build` (and so `npm install` and `npm start`) runs it.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/playground");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, "src/playground/main.ts"), join(root, "src/playground/app.css")],
  entryNames: "app",
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022"],
  outdir: out,
  logLevel: "warning",
  legalComments: "none",
});
copyFileSync(join(root, "src/playground/index.html"), join(out, "index.html"));
if (process.argv.includes("--size")) {
  const size = (file) => gzipSync(readFileSync(join(out, file))).length;
  const total = ["index.html", "app.js", "app.css"].reduce((sum, file) => sum + size(file), 0);
  console.log(`playground: ${(total / 1024).toFixed(1)} KB gzipped (app.js ${(size("app.js") / 1024).toFixed(1)} KB)`);
}
