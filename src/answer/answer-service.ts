import type { Mode } from "../core/modes.js";
import { ClientClosedError, QueryFailedError } from "../errors/adapter-error.js";
import type { ChatCompletion, ChatCompletionChunk, ChunkDelta } from "../dialects/chat-completions/chat-completion.js";
import { buildCompletion, completionId, type FinishedChoice } from "../dialects/chat-completions/build-completion.js";
import { buildMessage, type MessageOptions } from "../dialects/chat-completions/build-message.js";
import type { PlannedQuery, QueryPlan } from "../plan/plan-queries.js";
import { countUsage } from "./count-usage.js";
import {
  advanceChoice,
  type ChoiceStreamState,
  finishChoice,
  newChoiceStream,
  ROLE_DELTA,
} from "../dialects/chat-completions/stream-choice.js";
import { createQuery } from "../upstream/create-query.js";
import type { QuerySnapshot } from "../core/query-snapshot.js";
import { toQuerySnapshot } from "../upstream/to-query-snapshot.js";
import type { QueryWatcher, WatchEnd } from "../upstream/query-watcher.js";
import type { Caller, WorkspaceClient } from "../upstream/workspace-client.js";
import { countSoon, type TokenCounter } from "../tokens/token-counter.js";
import type { Clock } from "../util/clock.js";
import { mergeAsync } from "../util/merge-async.js";

/** What the chat service is built from: the upstream, the watcher, time, and the settings. */
export interface ChatServiceOptions {
  client: WorkspaceClient;
  watcher: QueryWatcher;
  clock: Clock;
  message: MessageOptions;
  queryTimeoutMs: Record<Mode, number>;
  maxListPages: number;
  tokens: TokenCounter;
  /** Told how each followed query ended: PROCESSED, FAILED, timeout or cancelled (metrics). */
  onQueryEnd?: (mode: Mode, state: WatchEnd) => void;
}

/** One chat request, planned and attributed: what the service needs to answer it. */
export interface ChatJob {
  model: string;
  plan: QueryPlan;
  caller: Caller;
  /**
   * Aborts when the client leaves; the service aborts it itself once the queries need no more
   * following (the answer is complete, or one choice failed and the others must stop). One
   * controller per request: each is an EventTarget, which an open stream would otherwise hold two of.
   */
  controller: AbortController;
  /**
   * Streamed answers: called with choice 0's content once it is complete, before the stream ends
   * (conversations). A non-streamed answer is remembered by the route once it is written.
   */
  onAnswered?: (content: string) => Promise<void>;
}

/**
 * Runs planned queries against the upstream: create each (in parallel for `n` > 1), follow it
 * with the shared watcher, and hand back snapshots. The transport (JSON or SSE) is the caller's.
 */
export class ChatService {
  constructor(private readonly options: ChatServiceOptions) {}

  /** Creates one planned query (docs/architecture.md#data-flow-of-one-request); its answer is the first snapshot. */
  async create(job: ChatJob, query: PlannedQuery, signal: AbortSignal): Promise<QuerySnapshot> {
    const created = await createQuery(
      this.options.client,
      job.caller,
      query.createBody,
      { maxListPages: this.options.maxListPages, signal },
    );
    return toQuerySnapshot(created);
  }

  /** Snapshots of a created query until it ends (docs/architecture.md#data-flow-of-one-request); reports how it ended. */
  watch(job: ChatJob, initial: QuerySnapshot): AsyncGenerator<QuerySnapshot> {
    const { mode } = job.plan;
    return this.options.watcher.watch({
      caller: job.caller,
      initial,
      deadlineMs: this.options.queryTimeoutMs[mode],
      label: `${mode} query ${initial.id}`,
      signal: job.controller.signal,
      channel: initial.channel,
      onEnd: (end) => this.options.onQueryEnd?.(mode, end),
    });
  }

  /** Answers a non-streaming request: every choice's query to its end, then one `chat.completion`. */
  async complete(job: ChatJob): Promise<ChatCompletion> {
    const created = Math.floor(this.options.clock.now() / 1000);
    const { signal } = job.controller;
    // Counted while the upstream answers (the create calls below are sent first).
    const promptTokens = countSoon(this.options.tokens, job.plan.prompt);
    const finished = await Promise.all(
      job.plan.queries.map(async (query) => {
        try {
          let last: QuerySnapshot | undefined;
          for await (const snapshot of this.watch(job, await this.create(job, query, signal))) last = snapshot;
          if (signal.aborted || !last) throw new ClientClosedError();
          return this.finish(last);
        } catch (error) {
          // With several choices, one failing stops the others.
          job.controller.abort();
          throw error;
        }
      }),
    );
    const completion = await buildCompletion(
      { id: completionId(job.plan.queries[0]?.queryId ?? ""), created, model: job.model, prompt: job.plan.prompt, promptTokens },
      finished,
      this.options.tokens,
    );
    return completion;
  }

  /**
   * Starts a streamed answer: every choice's query is created first, so that a failure up to
   * there is still an ordinary HTTP error; the returned chunks then follow the queries as they run.
   */
  async startStream(job: ChatJob, options: { includeUsage: boolean }): Promise<AsyncGenerator<ChatCompletionChunk>> {
    // Counted while the upstream answers, when usage is asked for.
    const promptTokens = options.includeUsage ? countSoon(this.options.tokens, job.plan.prompt) : undefined;
    try {
      const initials = await Promise.all(job.plan.queries.map((query) => this.create(job, query, job.controller.signal)));
      return this.streamChunks(job, initials, promptTokens);
    } catch (error) {
      job.controller.abort();
      throw error;
    }
  }

  /**
   * The chunks of a streamed answer, in OpenAI's order: a role chunk per choice, then steps as
   * `reasoning_content` and output growth as `content` as the watcher sees them, interleaved by
   * choice; per finished choice its annotations and sources in one chunk and a finish chunk; then,
   * when asked, one usage chunk with no choices. A FAILED query or a deadline throws.
   */
  private async *streamChunks(
    job: ChatJob,
    initials: QuerySnapshot[],
    /** Given when the client asked for a usage chunk (`stream_options.include_usage`). */
    promptTokens: Promise<number> | undefined,
  ): AsyncGenerator<ChatCompletionChunk> {
    const { message } = this.options;
    const base = {
      id: completionId(initials[0]?.id ?? ""),
      object: "chat.completion.chunk" as const,
      created: Math.floor(this.options.clock.now() / 1000),
      model: job.model,
    };
    const chunk = (index: number, delta: ChunkDelta, finish: "stop" | null = null): ChatCompletionChunk => ({
      ...base,
      choices: [{ index, delta, logprobs: null, finish_reason: finish }],
    });
    const states = initials.map(() => newChoiceStream());
    const finals: QuerySnapshot[] = [];
    try {
      for (const index of initials.keys()) yield chunk(index, ROLE_DELTA);
      /** The chunks one snapshot of choice `index` adds. */
      const chunksOf = (index: number, snapshot: QuerySnapshot): ChatCompletionChunk[] => {
        const state = states[index] as ChoiceStreamState;
        if (snapshot.status === "FAILED") throw queryFailed(snapshot);
        if (snapshot.status !== "PROCESSED") return advanceChoice(state, snapshot, message.stepsOutput).map((delta) => chunk(index, delta));
        finals[index] = snapshot;
        return [...finishChoice(state, snapshot, message).map((delta) => chunk(index, delta)), chunk(index, {}, "stop")];
      };
      const watches = initials.map((initial) => this.watch(job, initial));
      if (watches.length === 1) {
        // One choice (the usual case) needs no merging: one generator less held per open stream.
        for await (const snapshot of watches[0] as AsyncGenerator<QuerySnapshot>) yield* chunksOf(0, snapshot);
      } else {
        for await (const { index, value } of mergeAsync(watches)) yield* chunksOf(index, value);
      }
      if (finals.filter(Boolean).length < initials.length) throw new ClientClosedError();
      const first = states[0] as ChoiceStreamState;
      await job.onAnswered?.(first.prefix + first.output + first.footer);
      if (promptTokens) {
        const prompt = await promptTokens;
        yield {
          ...base,
          choices: [],
          usage: await countUsage(
            states.map((state, index) => ({
              prompt: job.plan.prompt,
              promptTokens: prompt,
              content: state.prefix + state.output + state.footer,
              reasoning: message.stepsOutput === "reasoning" ? state.reasoning : "",
              upstream: finals[index]?.usage,
            })),
            this.options.tokens,
          ),
        };
      }
    } finally {
      job.controller.abort();
    }
  }

  /** A terminal snapshot as a finished choice; a FAILED query is an error (docs/upstream-assumptions.md#terminal-states-and-deadlines). */
  finish(snapshot: QuerySnapshot): FinishedChoice {
    if (snapshot.status === "FAILED") throw queryFailed(snapshot);
    const message = buildMessage(snapshot, this.options.message);
    return { message, usage: snapshot.usage };
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
