// `npm run docs`: writes the configuration table and the tracing variables' table into README.md
// from src/config/config-docs.ts.
import { readFileSync, writeFileSync } from "node:fs";
import { configurationTable, tracingTable } from "../dist/src/config/config-docs.js";

const path = new URL("../README.md", import.meta.url);
let readme = readFileSync(path, "utf8");
for (const [marker, table] of [["config-table", configurationTable()], ["tracing-table", tracingTable()]]) {
  const start = readme.indexOf(`<!-- ${marker}:start`);
  const end = readme.indexOf(`<!-- ${marker}:end -->`);
  if (start < 0 || end < 0) throw new Error(`README.md has no ${marker} markers`);
  const opening = readme.slice(start, readme.indexOf("\n", start) + 1);
  readme = `${readme.slice(0, start)}${opening}${table}\n${readme.slice(end)}`;
}
writeFileSync(path, readme);
