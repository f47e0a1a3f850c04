import type { SubcommandFlags } from "../config/command-line.js";
import { type Config, ConfigError, loadConfig } from "../config/config.js";
import { type Mode, MODES } from "../core/modes.js";

/** The flags of `check` beside the server's (every setting by its variable's flag): docs/check.md#running-it. */
export const CHECK_FLAGS: SubcommandFlags = {
  options: {
    "api-key": { type: "string" },
    workspace: { type: "string" },
    json: { type: "boolean" },
    "read-only": { type: "boolean" },
    modes: { type: "string" },
    question: { type: "string" },
    record: { type: "string" },
    "record-content": { type: "boolean" },
  },
  usage: [
    "workspace-openai-adapter check: probes each assumption the adapter makes about a Workspace Knowledge Service",
    "",
    "Usage: workspace-openai-adapter check --workspace-base-url URL --workspace ID [--flag value]...",
    "",
    "It creates one small labelled query per mode (and two for chat completions side by side) unless --read-only;",
    "it says so before it asks. Exit 0 when every assumption holds, 1 when one fails, 2 for a usage error.",
    "",
    "  --api-key KEY                    The workspace key to check (default: WORKSPACE_API_KEY; prefer the variable:",
    "                                   a flag shows in the process list)",
    "  --workspace ID                   The workspace to check (default: DEFAULT_WORKSPACE)",
    "  --json                           Print {checks: [{name, ok, level, detail, setting?}], summary, …} instead of lines",
    "  --read-only                      Create no query: health, credential, workspace and list paging only",
    "  --modes ask,reason,build         The modes to ask one labelled query in (default: all three)",
    "  --question TEXT                  What the labelled queries ask (default: what the workspace's documents cover)",
    "  --record DIR                     Write every exchange of the run to DIR/recording.json, credentials and tokens",
    "                                   removed, content replaced by placeholders of the same shape (docs/check.md#recordings)",
    "  --record-content                 Keep the content in the recording (questions, answers, sources)",
    "",
    "Every server flag below is read too; the ones check uses are the upstream's (WORKSPACE_BASE_URL, MODE_FIELD,",
    "REALTIME, REALTIME_ALLOWED_HOSTS, *_TIMEOUT_MS, POLL_*, MAX_LIST_PAGES, UPSTREAM_*) and the answers' (for the",
    "adapter's own answer beside the service's).",
  ],
};

/** The question the labelled queries ask when `--question` is not given. */
export const DEFAULT_QUESTION = "What do the documents of this workspace cover? Answer briefly and cite the documents you use.";

/** What one run of `check` is asked to do. */
export interface CheckSettings {
  /** The service's base URL as configured (its userinfo, if any, is never sent nor shown). */
  baseUrl: string;
  apiKey: string;
  workspace: string | undefined;
  modes: Mode[];
  readOnly: boolean;
  /** The labelled queries' question, without the label. */
  question: string;
  json: boolean;
  record: { dir: string; keepContent: boolean } | undefined;
  /** The server's configuration, read from the same variables and flags. */
  config: Config;
  /** The variables as given (flags applied): the adapter's own answer is configured from them. */
  environment: Record<string, string | undefined>;
}

/** A command line `check` cannot run with: exit 2, as the server's CLI does for a bad flag or value. */
export class CheckUsageError extends Error {}

/**
 * Reads `check`'s settings: its own flags, and the server's configuration from the same
 * environment (flags applied). The key to check is `--api-key` or `WORKSPACE_API_KEY`; the
 * latter is left out of the server's configuration, where it would ask for `ADAPTER_API_KEYS`.
 */
export function readCheckSettings(
  flags: Record<string, string | boolean>,
  environment: Record<string, string | undefined>,
): CheckSettings {
  const text = (name: string) => (typeof flags[name] === "string" ? (flags[name] as string).trim() || undefined : undefined);
  let config: Config;
  try {
    config = loadConfig({ ...environment, WORKSPACE_API_KEY: undefined });
  } catch (error) {
    if (error instanceof ConfigError) throw new CheckUsageError(error.message);
    throw error;
  }
  const baseUrl = config.upstream.baseUrl;
  if (!baseUrl) throw new CheckUsageError("check needs the service's address: --workspace-base-url URL (or WORKSPACE_BASE_URL)");
  const apiKey = text("api-key") ?? environment.WORKSPACE_API_KEY?.trim();
  if (!apiKey) throw new CheckUsageError("check needs a workspace key: WORKSPACE_API_KEY (or --api-key)");
  const modes = (text("modes") ?? MODES.join(","))
    .split(",")
    .map((mode) => mode.trim())
    .filter(Boolean);
  const unknown = modes.filter((mode) => !(MODES as readonly string[]).includes(mode));
  if (unknown.length > 0 || modes.length === 0) throw new CheckUsageError(`--modes takes ask, reason and build, comma-separated (got ${unknown.join(", ") || "none"})`);
  const recordDir = text("record");
  if (flags["record-content"] && !recordDir) throw new CheckUsageError("--record-content goes with --record DIR");
  return {
    baseUrl,
    apiKey,
    workspace: text("workspace") ?? config.upstream.defaultWorkspace,
    modes: [...new Set(modes)] as Mode[],
    readOnly: flags["read-only"] === true,
    question: text("question") ?? DEFAULT_QUESTION,
    json: flags.json === true,
    record: recordDir ? { dir: recordDir, keepContent: flags["record-content"] === true } : undefined,
    config,
    environment,
  };
}
