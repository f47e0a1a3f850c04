// `npm run docs`: writes what the docs show from what they describe. The configuration table
// (docs/configuration.md) and the tracing variables' table (docs/observability.md) come from
// src/config/config-docs.ts, the headers' table (docs/operating.md) from src/http/headers.ts; every
// recipe block, in README.md and docs/**/*.md, from its file in examples/. Tests fail when any of
// them is out of date (test/unit/config/config.test.ts, test/features/docs/headers.test.ts,
// test/features/examples/recipes.test.ts).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { extname, sep } from "node:path";
import { configurationTable, tracingTable } from "../dist/src/config/config-docs.js";
import { headersTable } from "../dist/src/http/headers.js";

const root = new URL("../", import.meta.url);
const read = (path) => readFileSync(new URL(path, root), "utf8");

/** The fence language of an example, by its extension. */
const LANGUAGES = { ".sh": "sh", ".mjs": "js", ".js": "js", ".py": "python", ".yaml": "yaml", ".yml": "yaml", ".json": "json" };

/** A recipe block as the docs show it: the marker, the file fenced, the end marker. */
function recipeBlock(path) {
  const language = LANGUAGES[extname(path)];
  if (!language) throw new Error(`${path}: no fence language for its extension`);
  return `<!-- recipe:${path} -->\n\`\`\`${language}\n${read(path).trim()}\n\`\`\`\n<!-- recipe:end -->`;
}

/** Rewrites the table between `<!-- marker:start … -->` and `<!-- marker:end -->`. */
function writeTable(text, file, marker, table) {
  const start = text.indexOf(`<!-- ${marker}:start`);
  const end = text.indexOf(`<!-- ${marker}:end -->`);
  if (start < 0 || end < 0) throw new Error(`${file} has no ${marker} markers`);
  const opening = text.slice(start, text.indexOf("\n", start) + 1);
  return `${text.slice(0, start)}${opening}${table}\n${text.slice(end)}`;
}

const tables = [
  ["docs/configuration.md", "config-table", configurationTable()],
  ["docs/observability.md", "tracing-table", tracingTable()],
  ["docs/operating.md", "headers-table", headersTable()],
];
const docsPages = readdirSync(new URL("docs/", root), { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".md"));
const pages = ["README.md", ...docsPages.map((name) => `docs/${name.split(sep).join("/")}`)];
for (const page of pages) {
  let text = read(page);
  for (const [file, marker, table] of tables) if (file === page) text = writeTable(text, file, marker, table);
  text = text.replace(/<!-- recipe:(?!end -->)(\S+) -->\n[\s\S]*?<!-- recipe:end -->/g, (_, path) => recipeBlock(path));
  writeFileSync(new URL(page, root), text);
}
