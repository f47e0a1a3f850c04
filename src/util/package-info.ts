import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project's root folder (where package.json is), found from this file whether it runs from src/ or dist/. */
export function projectRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, "package.json")) && dirname(folder) !== folder) folder = dirname(folder);
  return folder;
}

/** The package version, for `--version` and the OpenAPI document. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(projectRoot(), "package.json"), "utf8")) as { version: string }).version;
}
