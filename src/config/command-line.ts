import { CONFIG_DOCS, flagOf, helpText } from "./config-docs.js";

/** What the command line asks for: run (with these environment overrides), or print and exit. */
export type CommandLine =
  | { kind: "run"; environment: Record<string, string> }
  | { kind: "print"; text: string; exitCode: number };

const FLAGS = new Map(Object.keys(CONFIG_DOCS).map((variable) => [flagOf(variable), variable]));

/**
 * Reads the command line: `--help`, `--version`, and one flag per environment variable
 * (`--port 9000` or `--port=9000` sets `PORT`), so the CLI and the environment cannot drift apart.
 */
export function parseCommandLine(argv: readonly string[], version: string): CommandLine {
  const environment: Record<string, string> = {};
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] as string;
    if (argument === "--help" || argument === "-h") return { kind: "print", text: helpText(version), exitCode: 0 };
    if (argument === "--version" || argument === "-v") return { kind: "print", text: `${version}\n`, exitCode: 0 };
    const [flag, inline] = argument.includes("=") ? [argument.slice(0, argument.indexOf("=")), argument.slice(argument.indexOf("=") + 1)] : [argument, undefined];
    const variable = FLAGS.get(flag as string);
    if (!variable) {
      return { kind: "print", text: `Unknown option ${JSON.stringify(argument)}. See --help.\n`, exitCode: 2 };
    }
    const value = inline ?? argv[index + 1];
    if (value === undefined) return { kind: "print", text: `Option ${flag} needs a value. See --help.\n`, exitCode: 2 };
    if (inline === undefined) index += 1;
    environment[variable] = value;
  }
  return { kind: "run", environment };
}
