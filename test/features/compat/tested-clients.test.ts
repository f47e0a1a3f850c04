import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/util/package-info.js";
import { COMPAT_CLIENTS, type Installed, installed, MATRIX, type MatrixRow } from "../../compat/clients.js";

// The "Tested clients" table of docs/clients.md says what the matrix (test/compat/clients.ts) runs,
// with the versions installed now: a dependency bump, or a row added or dropped, fails here until
// the page says so (the failure shows the table as it should read).

const root = projectRoot();

/** One row's versions: the client's own, then what it runs with. */
const versionOf = ([own, ...others]: readonly Installed[]) =>
  `${own?.version}${others.length > 0 ? ` with ${others.map((pkg) => `${pkg.name} ${pkg.version}`).join(", ")}` : ""}`;

/** The table as the matrix and the installed packages say it should read. */
function expectedTable(): string[] {
  const clients = new Map<string, MatrixRow[]>();
  for (const row of MATRIX) clients.set(row.client, [...(clients.get(row.client) ?? []), row]);
  const lines = ["| Client | Versions | Chat completions | Streamed | Responses API | Citations shown |", "|---|---|---|---|---|---|"];
  for (const [client, rows] of clients) {
    const versions = [...new Set(rows.map((row) => versionOf(row.packages)))].join("; ");
    const has = (api: MatrixRow["api"]) => (rows.some((row) => row.api === api) ? "yes" : "—");
    const shows = [...new Set(rows.map((row) => row.shows))];
    const shown =
      shows.length === 1 ? shows[0] : (["chat", "responses"] as const).map((api) => `${api === "chat" ? "chat" : "Responses"}: ${rows.find((row) => row.api === api)?.shows}`).join("; ");
    // Every row runs the scenario plain and streamed.
    lines.push(`| ${client} | ${versions} | ${has("chat")} | yes | ${has("responses")} | ${shown} |`);
  }
  return lines;
}

/** The first table after the "Tested clients" heading of docs/clients.md. */
function pageTable(): string[] {
  const page = readFileSync(join(root, "docs/clients.md"), "utf8");
  expect(page).toContain("\n## Tested clients\n");
  const section = page.slice(page.indexOf("\n## Tested clients\n"));
  const lines = section.split("\n");
  const start = lines.findIndex((line) => line.startsWith("|"));
  const end = lines.findIndex((line, index) => index > start && !line.startsWith("|"));
  return lines.slice(start, end);
}

describe("the Tested clients table of docs/clients.md", () => {
  it("lists every client of the matrix with the versions installed, and what each shows", () => {
    expect(pageTable()).toEqual(expectedTable());
  });

  it("covers every client version the project installs for the matrix, and the matrix runs only those", () => {
    const manifest = (folder: string) => JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as Record<string, Record<string, string>>;
    // The matrix's clients: the project's aliased versions, and test/compat/clients' own. The MCP
    // SDK's older lines are MCP clients, run by test/features/mcp/mcp-clients.test.ts, not by this matrix.
    const aliases = Object.entries(manifest(root).devDependencies ?? {})
      .filter(([, spec]) => spec.startsWith("npm:") && !spec.startsWith("npm:@modelcontextprotocol/"))
      .map(([alias]) => installed(alias));
    const compat = Object.keys(manifest(COMPAT_CLIENTS).dependencies ?? {}).filter((name) => name !== "zod").map((name) => installed(name, COMPAT_CLIENTS));
    const run = new Set(MATRIX.flatMap((row) => row.packages).map((pkg) => `${pkg.name}@${pkg.version}`));
    expect([...aliases, ...compat].map((pkg) => `${pkg.name}@${pkg.version}`).filter((pkg) => !run.has(pkg))).toEqual([]);
    expect(MATRIX.map((row) => row.id)).toEqual([...new Set(MATRIX.map((row) => row.id))]);
  });
});
