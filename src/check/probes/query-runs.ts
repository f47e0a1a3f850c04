import { randomUUID } from "node:crypto";
import pino from "pino";
import type { Mode } from "../../core/modes.js";
import type { QuerySnapshot } from "../../core/query-snapshot.js";
import { planQueries } from "../../plan/plan-queries.js";
import { UNTRACED_ANSWER } from "../../telemetry/answer-trace.js";
import { createQuery } from "../../upstream/create-query.js";
import type { UpstreamQuery } from "../../upstream/query-schemas.js";
import { QueryWatcher, type WatchEnd } from "../../upstream/query-watcher.js";
import { RealtimeHub } from "../../upstream/realtime/realtime-hub.js";
import { toQuerySnapshot } from "../../upstream/to-query-snapshot.js";
import type { WorkspaceClient } from "../../upstream/workspace-client.js";
import type { Clock } from "../../util/clock.js";
import { callerOf, type ProbeContext } from "../probe-context.js";
import { type ChannelObservation, ObservingSubscriber, observationOf } from "./channel-observer.js";

/** The label every query of a `check` run starts with, so that a person can tell them apart in the workspace. */
export function labelled(what: string, question: string): string {
  return `[workspace-openai-adapter check · ${what}] ${question}`;
}

/** One labelled query of a mode: how it was created, what the list showed of it, what the adapter made of it. */
export interface QueryRun {
  mode: Mode;
  /** The create body, built by the adapter's own planning (the mode in `MODE_FIELD`). */
  body: Record<string, unknown> & { id: string };
  /** `now()` when the create was sent: every time of the run is measured from it. */
  startedAt: number;
  created: UpstreamQuery | null;
  /** Every list item of it the polls read, raw (the loose schema keeps every field). */
  seen: { at: number; item: UpstreamQuery }[];
  /** The snapshots the adapter's watcher made of it (list and channel merged), as a client would be shown them. */
  shown: { at: number; snapshot: QuerySnapshot }[];
  end: WatchEnd | null;
  /** What ended the watch when it was not the query's end (a deadline, a failing list). */
  error: unknown;
  /** Its realtime channel as the adapter followed it; null without one (or with `REALTIME=off`). */
  observation: ChannelObservation | null;
}

/** The runs created, and the refusal that stopped the creating, if one did. */
export interface CreatedRuns {
  runs: QueryRun[];
  refusal: { mode: Mode; error: unknown } | null;
}

/**
 * Creates one labelled query per mode, one after the other, through the adapter's own create
 * (create-query.ts: the adapter's body, its id, its recovery of a lost answer). Stops at the first
 * refusal: it is returned, to be read for what it says about `MODE_FIELD`.
 */
export async function createRuns(context: ProbeContext): Promise<CreatedRuns> {
  const { settings } = context;
  const { modeField, maxListPages } = settings.config.upstream;
  const runs: QueryRun[] = [];
  for (const mode of settings.modes) {
    context.phase(`query.${mode}`);
    const prompt = labelled(mode, settings.question);
    const [planned] = planQueries({ prompt, mode, choices: 1 }, { modeField, newQueryId: randomUUID }).queries;
    const body = (planned as { createBody: QueryRun["body"] }).createBody;
    const run = newRun(mode, body, context.now());
    const signal = new AbortController().signal;
    try {
      run.created = await createQuery(context.client, callerOf(context), body, { maxListPages, signal });
    } catch (error) {
      return { runs, refusal: { mode, error } };
    }
    runs.push(run);
  }
  return { runs, refusal: null };
}

function newRun(mode: Mode, body: QueryRun["body"], startedAt: number): QueryRun {
  return { mode, body, startedAt, created: null, seen: [], shown: [], end: null, error: null, observation: null };
}

/** A clock whose timers keep the process alive: `check` has no server listening while it waits for a poll. */
const keptAliveClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Follows the created queries to their ends with the adapter's own watcher (query-watcher.ts: the
 * shared poller, its pace, its page following, each mode's deadline) and, with `REALTIME=auto`,
 * its realtime hub, observed (channel-observer.ts). Fills each run's `seen`, `shown`, `end`.
 */
export async function followRuns(context: ProbeContext, runs: readonly QueryRun[]): Promise<void> {
  const { upstream } = context.settings.config;
  const byId = new Map(runs.flatMap((run) => (run.created ? [[run.created.id, run] as const] : [])));
  const client: WorkspaceClient = {
    ...context.client,
    listQueries: async (caller, page, signal) => {
      const result = await context.client.listQueries(caller, page, signal);
      const at = context.now();
      for (const item of result.items) {
        const run = byId.get(item.id);
        run?.seen.push({ at: at - run.startedAt, item });
      }
      return result;
    },
  };
  const observations = new Map<string, ChannelObservation>();
  const hub =
    upstream.realtime === "auto"
      ? new RealtimeHub({ policy: context.realtimePolicy, logger: pino({ level: "silent" }), minReconnectDelayMs: 100, maxReconnectDelayMs: 1000 })
      : undefined;
  const subscriber = hub ? new ObservingSubscriber(hub, observations, Math.max(3000, 2 * upstream.pollIntervalMaxMs)) : undefined;
  const watcher = new QueryWatcher({
    client,
    clock: keptAliveClock,
    pollIntervalMinMs: upstream.pollIntervalMinMs,
    pollIntervalMaxMs: upstream.pollIntervalMaxMs,
    maxListPages: upstream.maxListPages,
    ...(subscriber ? { realtime: subscriber } : {}),
  });
  const follow = async (run: QueryRun, created: UpstreamQuery) => {
    const initial = toQuerySnapshot(created);
    if (initial.channel && hub) {
      run.observation = observationOf(initial, initial.channel);
      observations.set(initial.channel.channel, run.observation);
    }
    try {
      const watch = watcher.watch({
        caller: callerOf(context),
        initial,
        deadlineMs: upstream.queryTimeoutMs[run.mode],
        label: `${run.mode} query ${initial.id}`,
        signal: new AbortController().signal,
        ...(initial.channel && hub ? { channel: initial.channel } : {}),
        onEnd: (end) => {
          run.end = end;
        },
        trace: UNTRACED_ANSWER,
      });
      for await (const snapshot of watch) run.shown.push({ at: context.now() - run.startedAt, snapshot });
    } catch (error) {
      run.error = error;
    }
  };
  await Promise.all(runs.map((run) => (run.created ? follow(run, run.created) : undefined)));
  await subscriber?.settled();
  hub?.close();
}

/** The last snapshot the adapter made of a run (its answer when the run ended), or null. */
export function finalOf(run: QueryRun): QuerySnapshot | null {
  return run.shown.at(-1)?.snapshot ?? null;
}
