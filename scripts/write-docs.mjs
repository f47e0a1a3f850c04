// `npm run docs`: writes the configuration table into README.md from src/config/config-docs.ts.
import { readFileSync, writeFileSync } from "node:fs";
import { configurationTable } from "../dist/src/config/config-docs.js";

const path = new URL("../README.md", import.meta.url);
const readme = readFileSync(path, "utf8");
const start = readme.indexOf("<!-- config-table:start");
const end = readme.indexOf("<!-- config-table:end -->");
if (start < 0 || end < 0) throw new Error("README.md has no config-table markers");
const opening = readme.slice(start, readme.indexOf("\n", start) + 1);
writeFileSync(path, `${readme.slice(0, start)}${opening}${configurationTable()}\n${readme.slice(end)}`);
