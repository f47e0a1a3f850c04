import { type ParseArgsConfig, parseArgs } from "node:util";
import { environmentSchema } from "./config.js";
import { FLAG_ALIASES, flagOf, helpText } from "./config-docs.js";
import { errorMessage } from "../util/error-message.js";

/** What the command line asks for: run (with these environment overrides, and a subcommand's own flags), or print and exit. */
export type CommandLine =
  | { kind: "run"; environment: Record<string, string>; flags?: Record<string, string | boolean> }
  | { kind: "print"; text: string; exitCode: number };

/** A subcommand's own flags beside the variables' (`check --json`), and the help text that introduces them. */
export interface SubcommandFlags {
  options: NonNullable<ParseArgsConfig["options"]>;
  /** The lines `--help` shows before the variables' flags. */
  usage: string[];
}

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
export function parseCommandLine(argv: readonly string[], version: string, subcommand?: SubcommandFlags): CommandLine {
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  const options = subcommand ? { ...OPTIONS, ...subcommand.options } : OPTIONS;
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return { kind: "print", text: `${errorMessage(error)}. See --help.\n`, exitCode: 2 };
  }
  if (values.help) return { kind: "print", text: helpText(version, subcommand?.usage), exitCode: 0 };
  if (values.version) return { kind: "print", text: `${version}\n`, exitCode: 0 };
  const environment: Record<string, string> = {};
  const flags: Record<string, string | boolean> = {};
  for (const [flag, value] of Object.entries(values)) {
    const variable = VARIABLE_OF[flag];
    if (subcommand && Object.hasOwn(subcommand.options, flag) && (typeof value === "string" || typeof value === "boolean")) flags[flag] = value;
    else if (variable && typeof value === "string") environment[variable] = value;
  }
  return subcommand ? { kind: "run", environment, flags } : { kind: "run", environment };
}
