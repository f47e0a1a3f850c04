import { tracingRequested } from "./tracing-environment.js";

/** Node 22's switch that runs `AsyncLocalStorage` on V8's context frames, as Node 24 does by default (Node 24 refuses it). */
export const CONTEXT_FRAME_FLAG = "--experimental-async-context-frame";

/** What `contextFrameRelaunch` reads of the process. */
export interface ProcessFacts {
  readonly env: NodeJS.ProcessEnv;
  readonly version: string;
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
}

/**
 * The arguments to execute this same command again with `CONTEXT_FRAME_FLAG`
 * (docs/observability.md#what-tracing-costs), or undefined when it should run as it is. On Node 22,
 * tracing's context manager (`AsyncLocalStorage`) otherwise runs on promise hooks, which slow every
 * promise of the process once a context is entered (bench part `tracing`, Node 22.23: tracing's
 * added CPU per chat request 109 µs without the flag, 78 µs with it, at full sampling; 47 and
 * 28 µs at 10 %). Only when the environment turns tracing on, and when the command line and
 * NODE_OPTIONS do not name the switch already, either way: `--no-experimental-async-context-frame`
 * keeps promise hooks.
 */
export function contextFrameRelaunch({ env, version, execPath, execArgv, argv }: ProcessFacts): string[] | undefined {
  if (!version.startsWith("v22.")) return undefined;
  const named = (argument: string) => argument.endsWith("async-context-frame");
  if (execArgv.some(named) || (env.NODE_OPTIONS ?? "").split(/\s+/).some(named)) return undefined;
  if (!tracingRequested(env)) return undefined;
  return [execPath, ...execArgv, CONTEXT_FRAME_FLAG, ...argv.slice(1)];
}
