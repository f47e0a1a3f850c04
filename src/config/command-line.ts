import { type ParseArgsConfig, parseArgs } from "node:util";
import { environmentSchema } from "./config.js";
import { FLAG_ALIASES, flagOf, helpText } from "./config-docs.js";
import { errorMessage } from "../util/error-message.js";

/** What the command line asks for: run (with these environment overrides), or print and exit. */
export type CommandLine =
  | { kind: "run"; environment: Record<string, string> }
  | { kind: "print"; text: string; exitCode: number };

/** Flag name (without dashes) → the variable it sets: one per variable, plus the short aliases. */
const VARIABLE_OF: Record<string, string> = {
  ...Object.fromEntries(Object.keys(environmentSchema.shape).map((variable) => [flagOf(variable).slice(2), variable])),
  ...FLAG_ALIASES,
};

const OPTIONS: ParseArgsConfig["options"] = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
  ...Object.fromEntries(Object.keys(VARIABLE_OF).map((flag) => [flag, { type: "string" as const }])),
};

/**
 * Reads the command line with `node:util`'s parseArgs: `--help`, `--version`, and one flag per
 * environment variable (`--port 9000` or `--port=9000` sets `PORT`), so the CLI and the
 * environment cannot drift apart. Unknown flags and missing values exit with code 2.
 */
export function parseCommandLine(argv: readonly string[], version: string): CommandLine {
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return { kind: "print", text: `${errorMessage(error)}. See --help.\n`, exitCode: 2 };
  }
  if (values.help) return { kind: "print", text: helpText(version), exitCode: 0 };
  if (values.version) return { kind: "print", text: `${version}\n`, exitCode: 0 };
  const environment: Record<string, string> = {};
  for (const [flag, value] of Object.entries(values)) {
    const variable = VARIABLE_OF[flag];
    if (variable && typeof value === "string") environment[variable] = value;
  }
  return { kind: "run", environment };
}
