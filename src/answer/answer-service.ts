import type { Mode } from "../core/modes.js";
import { isTerminal, type QuerySnapshot } from "../core/query-snapshot.js";
import type { UpstreamUsage } from "../core/usage.js";
import { ClientClosedError, QueryFailedError, toAdapterError } from "../errors/adapter-error.js";
import type { PlannedQuery, QueryPlan } from "../plan/plan-queries.js";
import type { AnswerTrace } from "../telemetry/answer-trace.js";
import { countSoon, EARLY_COUNT_CHARS, type TokenCounter } from "../tokens/token-counter.js";
import { createQuery } from "../upstream/create-query.js";
import type { QueryWatcher, WatchEnd } from "../upstream/query-watcher.js";
import { toQuerySnapshot } from "../upstream/to-query-snapshot.js";
import type { Caller, WorkspaceClient } from "../upstream/workspace-client.js";
import { mergeAsync } from "../util/merge-async.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "./answer-events.js";
import { advance, advanceSteps, type ChoiceProgress, finish, newProgress, type SentSoFar, stepsSent } from "./choice-progress.js";
import { countUsage } from "./count-usage.js";
import type { Following, RunningAnswer } from "./running-answer.js";

/** What the answer service is built from: the upstream, the watcher, the token counter, the deadlines. */
export interface AnswerServiceOptions {
  client: WorkspaceClient;
  watcher: QueryWatcher;
  queryTimeoutMs: Record<Mode, number>;
  maxListPages: number;
  tokens: TokenCounter;
  /** Told how each followed query ended: PROCESSED, FAILED, timeout or cancelled (metrics). */
  onQueryEnd?: (mode: Mode, state: WatchEnd) => void;
}

/** One request's answer to produce: planned and attributed. */
export interface AnswerJob {
  plan: QueryPlan;
  caller: Caller;
  /**
   * Aborts when the client leaves; the service aborts it itself once the queries need no more
   * following (the answer is complete, or one choice failed and the others must stop). One
   * controller per request: each is an EventTarget, which an open stream would otherwise hold two of.
   */
  controller: AbortController;
  /**
   * Whether the answer's usage will be counted (the runner decides it once: the client is told it,
   * the TPM limit charges it, or a sampled span records it): a long prompt is then counted while the
   * upstream answers, a short one with the answer.
   */
  usageNeeded: boolean;
  /**
   * The answer's trace (docs/observability.md; `UNTRACED_ANSWER` when nothing records it): the
   * service reports the plan, each query created and each snapshot to it.
   */
  trace: AnswerTrace;
}

/**
 * The answer core: creates a plan's queries (in parallel for several choices), follows them with
 * the shared watcher, and turns their snapshots into neutral answer events. Dialects only encode
 * those events; nothing here knows a wire format.
 */
export class AnswerService {
  constructor(private readonly options: AnswerServiceOptions) {}

  /**
   * Creates every choice's query first, so that a failure up to there is still an ordinary HTTP
   * error; the answer's events then follow the queries as they run.
   */
  async start(job: AnswerJob): Promise<RunningAnswer> {
    // Counted while the upstream answers (the create calls below are sent first).
    const promptTokens = this.promptTokens(job);
    job.trace.planned(job.plan);
    let initials: QuerySnapshot[];
    try {
      initials = await Promise.all(job.plan.queries.map((query, choice) => this.create(job, query, choice)));
    } catch (error) {
      job.controller.abort();
      throw error;
    }
    return this.running(job, initials, promptTokens);
  }

  /**
   * Follows a query that already exists, from where another replica left its answer
   * (docs/responses-api.md#background-mode: a background answer taken over): nothing is created,
   * and the events carry on from what was `sent`. The query is the truth: a replica that died
   * leaves it running upstream, and any replica can follow it by its id.
   */
  follow(job: Omit<AnswerJob, "plan"> & { queryId: string; prompt: string; mode: Mode; sent: SentSoFar }): RunningAnswer {
    const query = { index: 0, queryId: job.queryId, createBody: { id: job.queryId } };
    const answerJob: AnswerJob = { ...job, plan: { prompt: job.prompt, continued: true, mode: job.mode, queries: [query] } };
    const initial: QuerySnapshot = { id: job.queryId, status: "PROCESSING", output: "", steps: [], sources: [], usage: undefined };
    return this.running(answerJob, [initial], this.promptTokens(answerJob), job.sent);
  }

  /** The prompt's tokens, counted now when the answer's usage will be and the prompt is long (a short one is counted with the answer). */
  private promptTokens(job: AnswerJob): Promise<number> | undefined {
    const { prompt } = job.plan;
    return job.usageNeeded && prompt.length > EARLY_COUNT_CHARS ? countSoon(this.options.tokens, prompt) : undefined;
  }

  /** The answer of queries that exist (`initials`: their first snapshots), resumed after `resumed` when another replica began it. */
  private running(
    job: AnswerJob,
    initials: QuerySnapshot[],
    promptTokens: Promise<number> | undefined,
    resumed?: SentSoFar,
  ): RunningAnswer {
    const upstreamUsage: (UpstreamUsage | undefined)[] = [];
    return {
      queryIds: initials.map((initial) => initial.id),
      trace: job.trace,
      events: (following) => this.events(job, initials, following, upstreamUsage, resumed),
      usage: (sent) => this.usageOf(job.plan.prompt, promptTokens, sent, upstreamUsage),
    };
  }

  private async usageOf(
    prompt: string,
    promptTokens: Promise<number> | undefined,
    sent: readonly ChoiceSent[],
    upstreamUsage: (UpstreamUsage | undefined)[],
  ): Promise<TokenUsage> {
    const counted = await promptTokens;
    return countUsage(
      sent.map((choice, index) => ({
        prompt,
        promptTokens: counted,
        content: choice.content,
        reasoning: choice.reasoning,
        upstream: upstreamUsage[index],
      })),
      this.options.tokens,
    );
  }

  private async create(job: AnswerJob, query: PlannedQuery, choice: number): Promise<QuerySnapshot> {
    const created = await createQuery(this.options.client, job.caller, query.createBody, {
      maxListPages: this.options.maxListPages,
      signal: job.controller.signal,
    });
    job.trace.created(choice, created.id);
    return toQuerySnapshot(created);
  }

  /** Snapshots of a created query until it ends; reports how it ended. */
  private watch(job: AnswerJob, initial: QuerySnapshot): AsyncGenerator<QuerySnapshot> {
    const { mode } = job.plan;
    return this.options.watcher.watch({
      caller: job.caller,
      initial,
      deadlineMs: this.options.queryTimeoutMs[mode],
      label: `${mode} query ${initial.id}`,
      signal: job.controller.signal,
      channel: initial.channel,
      onEnd: (end) => this.options.onQueryEnd?.(mode, end),
      trace: job.trace,
    });
  }

  private async *events(
    job: AnswerJob,
    initials: QuerySnapshot[],
    following: Following,
    upstreamUsage: (UpstreamUsage | undefined)[],
    resumed?: SentSoFar,
  ): AsyncGenerator<AnswerEvent> {
    // A resumed answer goes on from the text sent; its steps are counted on the first snapshot that has some.
    const progress = initials.map((_, index) => (resumed ? { ...newProgress(index), text: resumed.text } : newProgress(index)));
    let stepsToCount = resumed !== undefined;
    let finished = 0;
    /** The events one snapshot of choice `index` adds; a FAILED query is an error. */
    const eventsOf = (index: number, snapshot: QuerySnapshot): AnswerEvent[] => {
      const choice = progress[index] as ChoiceProgress;
      if (stepsToCount && resumed && snapshot.steps.length > 0) {
        choice.stepsSeen = stepsSent(snapshot.steps, resumed.reasoning);
        stepsToCount = false;
      }
      job.trace.snapshot(index, snapshot);
      if (snapshot.status === "FAILED") throw queryFailed(snapshot);
      if (snapshot.status === "PROCESSED") {
        finished += 1;
        upstreamUsage[index] = snapshot.usage;
        return finish(choice, snapshot);
      }
      if (following === "steps") return advanceSteps(choice, snapshot);
      return following === "every-snapshot" ? advance(choice, snapshot) : [];
    };
    try {
      // (`for … yield` rather than `yield*`: an async generator's `yield*` over an array goes
      // through an async iterator of it, a promise more per event.)
      const [only] = initials;
      if (initials.length === 1 && only && isTerminal(only.status)) {
        // A query whose create answer has ended (a fast upstream) needs no following: its one
        // snapshot is the answer, told to the metrics as the watcher would tell it.
        this.options.onQueryEnd?.(job.plan.mode, only.status as WatchEnd);
        for (const event of eventsOf(0, only)) yield event;
      } else if (initials.length === 1 && only) {
        // One choice (the usual case) needs no merging: one generator less held per open answer.
        for await (const snapshot of this.watch(job, only)) for (const event of eventsOf(0, snapshot)) yield event;
      } else {
        const watches = initials.map((initial) => this.watch(job, initial));
        for await (const { index, value } of mergeAsync(watches)) for (const event of eventsOf(index, value)) yield event;
      }
    } catch (error) {
      const failure = toAdapterError(error);
      if (!(failure instanceof ClientClosedError) && !job.controller.signal.aborted) {
        job.trace.fail(failure);
        yield { type: "failed", error: failure };
      }
    } finally {
      // A failure, or a consumer that stopped early: the other choices' queries need no more
      // following. (With a reason given, aborting builds no DOMException and its stack.)
      if (finished < initials.length) job.controller.abort(ANSWER_ENDED);
    }
  }
}

/** The reason the answer service aborts a request's queries when it needs them no more. */
const ANSWER_ENDED = new ClientClosedError();

/** The error of a FAILED query, with the failure text the upstream gave (its output), shortened. */
function queryFailed(snapshot: QuerySnapshot): QueryFailedError {
  const reason = snapshot.output.trim();
  const shown = reason.length > 500 ? `${reason.slice(0, 500)}…` : reason;
  return new QueryFailedError(`The workspace query ${snapshot.id} failed${shown ? `: ${shown}` : " without saying why"}`);
}
