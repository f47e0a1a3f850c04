import { readdirSync, readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { environmentSchema } from "../../../src/config/config.js";
import { TRACING_VARIABLES } from "../../../src/config/tracing-settings.js";
import { projectRoot } from "../../../src/util/package-info.js";

// A setting is described in several places: its table row (written from the configuration schema
// by `npm run docs`), and by hand wherever a page explains it (operating.md, troubleshooting.md, a
// feature's page). The table is checked whole; this test holds every hand-written mention to the
// schema, so that a renamed or removed setting leaves no page naming it, and no setting lacks its row.

const root = projectRoot();

/**
 * Environment variables the docs name that the adapter's configuration does not read, and who
 * does. `readIn`: a file of this repository that reads it (checked); otherwise `by` says whose it is.
 */
const OUTSIDE: readonly { name: string; readIn?: string; by?: string }[] = [
  // The embedded workspace run on its own (`npm run workspace`).
  { name: "WORKSPACE_PORT", readIn: "src/embedded-workspace/main.ts" },
  { name: "EMBEDDED_API_KEYS", readIn: "src/embedded-workspace/main.ts" },
  // The test suite's (docs/development.md).
  { name: "REQUIRE_EXTERNAL_PROGRAMS", readIn: "test/helpers/external-programs.ts" },
  { name: "CHROMIUM_PATH", readIn: "test/helpers/external-programs.ts" },
  { name: "PROMETHEUS_PATH", readIn: "test/helpers/external-programs.ts" },
  // The benchmark's (docs/benchmarks.md).
  { name: "BENCH_ONLY", readIn: "bench/run.mjs" },
  { name: "BENCH_MERGE", readIn: "bench/run.mjs" },
  { name: "BENCH_NODES", readIn: "bench/run.mjs" },
  { name: "BENCH_SECONDS", readIn: "bench/run.mjs" },
  { name: "BENCH_REPEATS", readIn: "bench/run.mjs" },
  { name: "BENCH_STREAMS", readIn: "bench/run.mjs" },
  { name: "BENCH_BASE", readIn: "bench/cpu.mjs" },
  { name: "BENCH_BASELINE", readIn: "bench/governance.mjs" },
  // The recipes' (examples/): where the reader's adapter and workspace are.
  { name: "ADAPTER_URL", readIn: "examples/langchain.mjs" },
  { name: "MCP_URL", readIn: "examples/openai-agents-mcp.mjs" },
  { name: "WORKSPACE_ID", readIn: "examples/langchain.mjs" },
  { name: "OPENAI_API_KEY", readIn: "examples/openai-agents-mcp.mjs" },
  // Keys the reader holds in their shell, in the docs' command lines.
  { name: "ADAPTER_GATEWAY_KEY", by: "the reader's shell (docs/governance.md, recipes)" },
  { name: "ADMIN_KEY", by: "the reader's shell (docs/governance.md, usage)" },
  { name: "OPS_KEY", by: "the reader's shell (docs/governance.md, recipes)" },
  // Other programs'.
  { name: "NODE_EXTRA_CA_CERTS", by: "Node.js" },
  { name: "NODE_OPTIONS", by: "Node.js (src/telemetry/context-frame.ts and start-tracing.ts look for the async context frame switches in it)" },
  { name: "ENABLE_FORWARD_USER_INFO_HEADERS", by: "Open WebUI" },
  { name: "TASK_MODEL_EXTERNAL", by: "Open WebUI" },
  { name: "LIBRECHAT_BODY_CONVERSATIONID", by: "LibreChat" },
  { name: "DD_OTLP_CONFIG_RECEIVER_PROTOCOLS_HTTP_ENDPOINT", by: "the Datadog Agent" },
];

/** OpenTelemetry's standard variables: those tracing reads are TRACING_VARIABLES (tabled in observability.md); the rest are the SDK's or a collector's. */
const OPEN_TELEMETRY = /^OTEL_/;

/** An environment variable's name in Markdown: upper case with an underscore, not part of a path, a URL or a call. */
const NAMED = /(?<![\w./:-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w(])/g;

const docsPages = [
  "README.md",
  ...readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name.split(sep).join("/")}`),
];

/** The constants the source declares in upper case (`UNTRACED_ANSWER`): a page naming one names code, not a variable. */
function codeNames(): Set<string> {
  const names = new Set<string>();
  for (const entry of readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), "utf8");
    for (const [, name] of text.matchAll(/\b(?:const|let|var|function|class|enum)\s+([A-Z][A-Z0-9_]*_[A-Z0-9_]+)\b/g)) names.add(name as string);
  }
  return names;
}

const settings = new Set(Object.keys(environmentSchema.shape));
const known = new Set([...settings, ...TRACING_VARIABLES.map((variable) => variable.name), ...OUTSIDE.map((variable) => variable.name), ...codeNames()]);

/** The variables a page names that nothing knows: not a setting, a tracing or OpenTelemetry variable, a listed outside one or a code constant. */
function unknownVariables(page: string, text: string): string[] {
  return text
    .split("\n")
    .flatMap((line, index) => [...line.matchAll(NAMED)].map((match) => ({ name: match[1] as string, line: index + 1 })))
    .filter(({ name }) => !known.has(name) && !OPEN_TELEMETRY.test(name))
    .map(({ name, line }) => `${page}:${line}: ${name}`);
}

/** The settings of the schema without a row in the configuration table of a page's text. */
function missingRows(page: string): string[] {
  const start = page.indexOf("<!-- config-table:start");
  const table = page.slice(start, page.indexOf("<!-- config-table:end -->", start));
  return [...settings].filter((name) => !table.includes(`| \`${name}\` |`));
}

describe("the settings the docs name", () => {
  it("are each a setting of the configuration schema, a tracing variable, or a variable listed here with who reads it", () => {
    expect(docsPages.flatMap((page) => unknownVariables(page, readFileSync(join(root, page), "utf8")))).toEqual([]);
  });

  it("listed here as read by the repository's own programs are read there, and each is still named in the docs", () => {
    const unread = OUTSIDE.filter((variable) => variable.readIn && !readFileSync(join(root, variable.readIn), "utf8").includes(variable.name));
    expect(unread.map((variable) => `${variable.name}: not in ${variable.readIn}`)).toEqual([]);
    const docs = docsPages.map((page) => readFileSync(join(root, page), "utf8")).join("\n");
    expect(OUTSIDE.filter((variable) => !docs.includes(variable.name)).map((variable) => variable.name)).toEqual([]);
    expect(OUTSIDE.every((variable) => (variable.readIn === undefined) !== (variable.by === undefined))).toBe(true);
  });

  it("include every setting of the schema: each has its row in the table of docs/configuration.md", () => {
    expect(settings.size).toBeGreaterThan(50);
    expect(missingRows(readFileSync(join(root, "docs/configuration.md"), "utf8"))).toEqual([]);
  });

  it("are really checked: a page naming an unknown variable, and a table without a setting's row, are found", () => {
    expect(unknownVariables("x.md", "Set `MAX_QUESTION_CHARS=100`, `LOG_LEVEL`, `OTEL_SERVICE_NAME`, `UNTRACED_ANSWER`\nand `WORKSPACE_PORTS`; not `src/A_B.ts` or `C_D()`.")).toEqual([
      "x.md:1: MAX_QUESTION_CHARS",
      "x.md:2: WORKSPACE_PORTS",
    ]);
    const page = readFileSync(join(root, "docs/configuration.md"), "utf8");
    expect(missingRows(page.replace(/^\| `MAX_CHOICES` \|.*\n/m, ""))).toEqual(["MAX_CHOICES"]);
  });
});
