#!/usr/bin/env node
// Builds the MCP answer card (src/mcp-app, an MCP App: docs/mcp.md#the-answer-card) into one
// self-contained HTML file, dist/mcp-app/answer-v1.html: esbuild bundles and minifies its script
// and stylesheet, which go inline into the page (hosts load a view as one HTML text; it may reach
// nothing else). `npm run build` (and so `npm install` and `npm start`) runs it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src/mcp-app");
const out = join(root, "dist/mcp-app");
const common = { bundle: true, minify: true, write: false, target: ["es2022"], logLevel: "warning", legalComments: "none" };

const [script, style] = await Promise.all([
  build({ ...common, entryPoints: [join(source, "main.ts")], format: "iife", platform: "browser" }),
  build({ ...common, entryPoints: [join(source, "card.css")] }),
]);
const js = script.outputFiles[0].text.trim();
const css = style.outputFiles[0].text.trim();
// Inline text that would end its element early (or open an HTML comment in a script) is refused
// rather than rewritten: the bundle should never hold it.
for (const [name, text, closing] of [["script", js, /<\/script|<!--/i], ["stylesheet", css, /<\/style/i]]) {
  if (closing.test(text)) throw new Error(`The card's ${name} holds text that would end its inline element`);
}
const template = readFileSync(join(source, "answer-v1.html"), "utf8");
const html = template.replace("<!-- card.css -->", () => css).replace("<!-- main.ts -->", () => js);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "answer-v1.html"), html);
if (process.argv.includes("--size")) {
  console.log(`answer card: ${(html.length / 1024).toFixed(1)} KB, ${(gzipSync(html).length / 1024).toFixed(1)} KB gzipped`);
}
