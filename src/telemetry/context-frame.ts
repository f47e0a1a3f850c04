import { tracingRequested } from "./tracing-environment.js";

/** Node 22's switch that runs `AsyncLocalStorage` on V8's context frames, as Node 24 does by default (Node 24 refuses it). */
export const CONTEXT_FRAME_FLAG = "--experimental-async-context-frame";

/** What the decisions below read of the process (`process` itself, or a test's). */
export interface ProcessFacts {
  readonly env: NodeJS.ProcessEnv;
  readonly version: string;
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
}

/** The node flags the process was started with: its command line's, then `NODE_OPTIONS`'s. */
export function nodeFlags({ env, execArgv }: Pick<ProcessFacts, "env" | "execArgv">): string[] {
  return [...execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/).filter(Boolean)];
}

/**
 * The node flags to run a traced adapter with, `CONTEXT_FRAME_FLAG` added, or undefined when it
 * runs as it is (docs/observability.md#what-tracing-costs). On Node 22, tracing's context manager
 * (`AsyncLocalStorage`) otherwise runs on promise hooks, which slow every promise of the process
 * once a context is entered (bench part `tracing`, Node 22.23: tracing's added CPU per chat request
 * 109 µs without the flag, 78 µs with it, at full sampling; 47 and 28 µs at 10 %). Only when the
 * environment turns tracing on, and when the command line and NODE_OPTIONS do not name the switch
 * already, either way: `--no-experimental-async-context-frame` keeps promise hooks.
 */
export function contextFrameFlags(facts: Pick<ProcessFacts, "env" | "version" | "execArgv">): string[] | undefined {
  if (!facts.version.startsWith("v22.")) return undefined;
  if (nodeFlags(facts).some((flag) => flag.endsWith("async-context-frame"))) return undefined;
  if (!tracingRequested(facts.env)) return undefined;
  return [...facts.execArgv, CONTEXT_FRAME_FLAG];
}

/** The arguments to execute this same command again on context frames (`contextFrameFlags`), or undefined. */
export function contextFrameRelaunch(facts: ProcessFacts): string[] | undefined {
  const flags = contextFrameFlags(facts);
  return flags && [facts.execPath, ...flags, ...facts.argv.slice(1)];
}
