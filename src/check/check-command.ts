import { parseCommandLine } from "../config/command-line.js";
import { packageVersion } from "../util/package-info.js";
import { exitCodeOf, formatLine, formatSummary, summarize } from "./check-report.js";
import { CHECK_FLAGS, CheckUsageError, readCheckSettings } from "./check-settings.js";
import { Secrets, shownUrl, userinfoSecrets } from "./recording/redact-secrets.js";
import { runChecks } from "./run-checks.js";

/** Where the command writes: the process's streams, or a test's. */
export interface CommandOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * `workspace-openai-adapter check` (docs/check.md): reads the command line as the server does (its
 * flags, every variable's flag, `--help`), runs the checks and prints one line each (or `--json`).
 * Returns the exit code: 0 when every assumption holds, 1 when one fails, 2 for a usage error.
 * Nothing it writes carries the key, a made-up key, a token or a URL's userinfo.
 */
export async function runCheckCommand(
  argv: readonly string[],
  environment: Record<string, string | undefined>,
  output: CommandOutput,
): Promise<number> {
  const command = parseCommandLine(argv, packageVersion(), CHECK_FLAGS);
  if (command.kind === "print") {
    (command.exitCode === 0 ? output.stdout : output.stderr).write(command.text);
    return command.exitCode;
  }
  let settings;
  try {
    settings = readCheckSettings(command.flags ?? {}, { ...environment, ...command.environment });
  } catch (error) {
    if (!(error instanceof CheckUsageError)) throw error;
    output.stderr.write(`${error.message}\nSee workspace-openai-adapter check --help.\n`);
    return 2;
  }
  const secrets = new Secrets([settings.apiKey, ...userinfoSecrets(settings.baseUrl)]);
  const print = (stream: CommandOutput["stdout"], text: string) => stream.write(`${secrets.scrub(text)}\n`);
  const where = `${shownUrl(settings.baseUrl)}${settings.workspace ? `, workspace '${settings.workspace}'` : ""}`;
  if (!settings.json) print(output.stdout, `workspace-openai-adapter check ${packageVersion()}: ${where}`);
  if (userinfoSecrets(settings.baseUrl).length > 0) {
    print(output.stderr, "check: the base URL's userinfo (user:password@) is never sent, by check or the adapter: give the key as WORKSPACE_API_KEY");
  }
  let run;
  try {
    run = await runChecks(
      settings,
      {
        line: (line) => {
          if (!settings.json) print(output.stdout, formatLine(line));
        },
        note: (text) => print(output.stderr, text),
      },
      secrets,
    );
  } catch (error) {
    print(output.stderr, `check stopped: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const summary = summarize(run.lines);
  if (settings.json) {
    const report = {
      checks: run.lines,
      summary,
      upstream: shownUrl(settings.baseUrl),
      workspace: settings.workspace ?? null,
      modes: settings.modes,
      queries: run.queries,
      answers: run.answers,
      recording: run.recording,
    };
    print(output.stdout, JSON.stringify(report, null, 2));
  } else {
    print(output.stdout, formatSummary(summary));
    if (run.recording) print(output.stdout, `recording: ${run.recording}`);
  }
  return exitCodeOf(run.lines);
}
