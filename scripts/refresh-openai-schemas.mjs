#!/usr/bin/env node
// Rebuilds test/fixtures/openai/*.json from OpenAI's published OpenAPI document
// (https://github.com/openai/openai-openapi, `openapi.yaml` or `openapi.json`):
//   node scripts/refresh-openai-schemas.mjs path/to/openapi.yaml
// Each vendored file keeps the same root schemas it holds now, plus every schema they reference,
// copied unmodified; review the diff before committing it.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";

const source = process.argv[2];
if (!source) {
  process.stderr.write("usage: node scripts/refresh-openai-schemas.mjs <openapi.yaml|openapi.json>\n");
  process.exit(2);
}
const text = readFileSync(source, "utf8");
const document = source.endsWith(".json") ? JSON.parse(text) : yaml.load(text);
const all = document.components.schemas;
const folder = join(dirname(fileURLToPath(import.meta.url)), "../test/fixtures/openai");

/** Every schema name `names` reach through `#/components/schemas/...` references. */
function closure(names) {
  const seen = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== "object" || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/schemas/")) add(value.split("/").pop());
      else visit(value);
    }
  };
  const add = (name) => {
    if (seen.has(name) || !all[name]) return;
    seen.add(name);
    visit(all[name]);
  };
  names.forEach(add);
  return [...seen].sort();
}

for (const file of ["openai-chat-schemas.json", "openai-responses-schemas.json", "openai-usage-schemas.json"]) {
  const path = join(folder, file);
  const current = JSON.parse(readFileSync(path, "utf8"));
  const names = closure(Object.keys(current.components.schemas));
  const missing = Object.keys(current.components.schemas).filter((name) => !all[name]);
  if (missing.length > 0) process.stderr.write(`${file}: no longer in the document: ${missing.join(", ")}\n`);
  const schemas = Object.fromEntries(names.map((name) => [name, all[name]]));
  const refreshed = { openapi_info: document.info, source: "openai/openai-openapi openapi document", components: { schemas } };
  writeFileSync(path, `${JSON.stringify(refreshed, null, 2)}\n`);
  process.stdout.write(`${file}: ${names.length} schemas\n`);
}
