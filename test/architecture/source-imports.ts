import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const src = join(dirname(fileURLToPath(import.meta.url)), "../../src");

/** One relative import inside src: the importing file and the imported one, as paths under src (`http/openapi.ts`). */
export interface SourceImport {
  from: string;
  to: string;
}

/** Every relative import (and re-export) of every source file under src. */
export function sourceImports(): SourceImport[] {
  const found: SourceImport[] = [];
  const files = readdirSync(src, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith(".ts"));
  for (const entry of files) {
    const file = join(entry.parentPath, entry.name);
    for (const match of readFileSync(file, "utf8").matchAll(/(?:^|\n)\s*(?:import|export)\b[^"']*?from\s+["'](\.[^"']+)["']/g)) {
      const target = resolve(dirname(file), match[1] as string).replace(/\.js$/, ".ts");
      found.push({ from: relative(src, file), to: relative(src, target) });
    }
  }
  return found;
}

/** The top-level folder of a path under src (`http` for http/routes/models.ts), or `.` for a file at src's top. */
export function folderOf(path: string): string {
  const parts = path.split("/");
  return parts.length > 1 ? (parts[0] as string) : ".";
}

/** The top-level folders of src, and `.` for its own files. */
export function sourceFolders(): string[] {
  return [".", ...readdirSync(src, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)];
}
