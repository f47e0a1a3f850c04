import { TRACING_VARIABLES } from "./tracing-settings.js";
import { variableDocs } from "./config.js";

/** The configuration tables of docs/configuration.md, one per section (`npm run docs` writes them; a test checks they are current). */
export function configurationTable(): string {
  return variableDocs()
    .map(({ title, variables }) => {
      const rows = variables.map(([name, doc]) => `| \`${name}\` | ${doc.shown} | ${doc.meaning} |`);
      return [`### ${title}`, "", "| Variable | Default | Meaning |", "|---|---|---|", ...rows].join("\n");
    })
    .join("\n\n");
}

/** Who reads a tracing variable, as the table says it. */
const READ_BY = { sdk: "the SDK", adapter: "the adapter", both: "both" } as const;

/** The table, in docs/observability.md, of the standard OpenTelemetry variables tracing reads, and who reads each (`npm run docs` writes it too). */
export function tracingTable(): string {
  const rows = TRACING_VARIABLES.map((variable) => `| \`${variable.name}\` | ${variable.shown} | ${variable.meaning} | ${READ_BY[variable.readBy]} |`);
  return ["| Variable | Default | Meaning | Read by |", "|---|---|---|---|", ...rows].join("\n");
}

/** The command-line flag of a variable: `WORKSPACE_BASE_URL` → `--workspace-base-url`. */
export function flagOf(variable: string): string {
  return `--${variable.toLowerCase().replaceAll("_", "-")}`;
}

/** Short flags for the variables people type most: `--documents ./my-folder`. */
export const FLAG_ALIASES: Record<string, string> = { documents: "EMBEDDED_DOCUMENTS_DIR" };

/** `--help`: every flag with its variable, default and meaning, as plain text; a subcommand's `usage` replaces the server's introduction. */
export function helpText(version: string, usage?: readonly string[]): string {
  const plain = (text: string) => text.replaceAll("`", "");
  const aliases = new Map(Object.entries(FLAG_ALIASES).map(([alias, variable]) => [variable, alias]));
  const lines = variableDocs().flatMap(({ title, variables }) => [
    "",
    `${title}:`,
    ...variables.map(([name, doc]) => {
      const alias = aliases.get(name);
      return `  ${flagOf(name).padEnd(32)} ${plain(doc.meaning)}\n  ${"".padEnd(32)} (${name}${alias ? `; also --${alias}` : ""}; default: ${plain(doc.shown)})`;
    }),
  ]);
  const introduction = usage ?? [
    `workspace-openai-adapter ${version}: an OpenAI-compatible server (chat completions, Responses) for a Workspace Knowledge Service`,
    "",
    "Usage: workspace-openai-adapter [--flag value | --flag=value]...",
    "       workspace-openai-adapter check --workspace-base-url URL --workspace ID   (see check --help)",
    "",
    "Every flag sets the environment variable in brackets (a flag wins over the environment).",
    "Without --workspace-base-url it starts the embedded workspace, a local stand-in.",
    "Routes: /v1/chat/completions, /v1/responses, /v1/models; /mcp (MCP tools ask, reason, build, search, fetch;",
    "--mcp off to turn off); every route with its errors in /openapi.json.",
  ];
  return [
    ...introduction,
    "",
    "  --help, -h                       Show this text",
    "  --version, -v                    Show the version",
    ...lines,
    "",
    "Tracing (OpenTelemetry) is set by the standard variables alone, with no flags; it is on when an",
    "OTLP endpoint is set, or on the process's own OpenTelemetry when a platform started it (e.g.",
    "node --import @opentelemetry/auto-instrumentations-node/register). See docs/observability.md, Tracing:",
    ...TRACING_VARIABLES.map((variable) => `  ${variable.name}`),
    "",
  ].join("\n");
}
