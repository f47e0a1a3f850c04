import type { Mode } from "../config/config.js";
import { ClientClosedError, QueryFailedError } from "../errors/adapter-error.js";
import type { ChatCompletion } from "../openai/chat-completion.js";
import { buildCompletion, completionId, type FinishedChoice } from "../translate/build-completion.js";
import { buildMessage, type StepsOutput } from "../translate/build-message.js";
import type { PlannedQuery, QueryPlan } from "../translate/plan-queries.js";
import { renderSteps } from "../translate/render-steps.js";
import { createQuery } from "../upstream/create-query.js";
import { type QuerySnapshot, toQuerySnapshot } from "../upstream/query-snapshot.js";
import type { QueryWatcher } from "../upstream/query-watcher.js";
import type { Caller, WorkspaceClient } from "../upstream/workspace-client.js";
import type { Clock } from "../util/clock.js";

/** What the chat service is built from: the upstream, the watcher, time, and the settings. */
export interface ChatServiceOptions {
  client: WorkspaceClient;
  watcher: QueryWatcher;
  clock: Clock;
  stepsOutput: StepsOutput;
  queryTimeoutMs: Record<Mode, number>;
  maxListPages: number;
}

/** One chat request, planned and attributed: what the service needs to answer it. */
export interface ChatJob {
  model: string;
  plan: QueryPlan;
  caller: Caller;
  signal: AbortSignal;
}

/**
 * Runs planned queries against the upstream: create each (in parallel for `n` > 1), follow it
 * with the shared watcher, and hand back snapshots. The transport (JSON or SSE) is the caller's.
 */
export class ChatService {
  constructor(private readonly options: ChatServiceOptions) {}

  /** Creates one planned query and yields its snapshots until it ends (DESIGN.md, data flow). */
  async *run(job: ChatJob, query: PlannedQuery, signal: AbortSignal): AsyncGenerator<QuerySnapshot> {
    const created = await createQuery(
      this.options.client,
      job.caller,
      query.createBody as Record<string, unknown> & { id: string },
      { maxListPages: this.options.maxListPages, signal },
    );
    yield* this.options.watcher.watch({
      caller: job.caller,
      initial: toQuerySnapshot(created),
      deadlineMs: this.options.queryTimeoutMs[job.plan.mode],
      label: `${job.plan.mode} query ${query.queryId}`,
      signal,
    });
  }

  /** Answers a non-streaming request: every choice's query to its end, then one `chat.completion`. */
  async complete(job: ChatJob): Promise<ChatCompletion> {
    const created = Math.floor(this.options.clock.now() / 1000);
    const failFast = new AbortController();
    const signal = AbortSignal.any([job.signal, failFast.signal]);
    const finished = await Promise.all(
      job.plan.queries.map(async (query) => {
        try {
          let last: QuerySnapshot | undefined;
          for await (const snapshot of this.run(job, query, signal)) last = snapshot;
          if (signal.aborted || !last) throw new ClientClosedError();
          return this.finish(last);
        } catch (error) {
          failFast.abort();
          throw error;
        }
      }),
    );
    return buildCompletion(
      {
        id: completionId(job.plan.queries[0]?.queryId ?? ""),
        created,
        model: job.model,
        prompt: job.plan.prompt,
      },
      finished,
    );
  }

  /** A terminal snapshot as a finished choice; a FAILED query is an error (DESIGN.md, Contract item 5). */
  finish(snapshot: QuerySnapshot): FinishedChoice {
    if (snapshot.status === "FAILED") throw queryFailed(snapshot);
    const message = buildMessage(snapshot, this.options.stepsOutput);
    return {
      message,
      output: snapshot.output,
      reasoning: this.options.stepsOutput === "none" ? "" : renderSteps(snapshot.steps),
      usage: snapshot.usage,
    };
  }
}

/** The error of a FAILED query, with the failure text the upstream gave (its output), shortened. */
export function queryFailed(snapshot: QuerySnapshot): QueryFailedError {
  const reason = snapshot.output.trim();
  const shown = reason.length > 500 ? `${reason.slice(0, 500)}…` : reason;
  return new QueryFailedError(
    `The workspace query ${snapshot.id} failed${shown ? `: ${shown}` : " without saying why"}`,
  );
}
