import type { TokenUsage } from "../answer/answer-events.js";
import type { AnswerJob, AnswerService } from "../answer/answer-service.js";
import { structuredAnswer } from "../answer/structured-answer.js";
import { type LocalAnswerJob, localAnswer } from "../answer/local-answer.js";
import type { RunningAnswer } from "../answer/running-answer.js";
import type { Identity } from "../auth/authenticate.js";
import type { Mode } from "../core/modes.js";
import type { BackgroundResponses } from "../continuity/background/background-responses.js";
import type { BackgroundRecord } from "../continuity/background/background-store.js";
import type { Resumption } from "../continuity/background/resumption.js";
import type { QueryOwners } from "../continuity/ownership/query-owners.js";
import { type PlanInput, type PlanOptions, planQueries } from "../plan/plan-queries.js";
import type { HeldReservation, RateLimits } from "../limits/rate-limits.js";
import type { SchemaService } from "../structured/schema-service.js";
import type { StructuredRequest } from "../structured/structured-request.js";
import { UNTRACED_ANSWER } from "../telemetry/answer-trace.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import type { Caller } from "../upstream/workspace-client.js";
import type { UsageLedger } from "../usage/usage-ledger.js";
import type { Ids } from "../util/ids.js";
import type { Admitted } from "./admission.js";
import { runInBackground } from "./delivery/background-delivery.js";
import { type Delivery, type DeliveryContext, NOT_METERED, type UsageMeter } from "./delivery/delivery.js";
import { metered } from "./metered-run.js";
import type { AnswerOrder, Delivering, PlannedAnswer } from "./answer-order.js";

/** What the runner is built from: one per adapter (`createApp`). */
export interface AnswerRunnerOptions extends DeliveryContext {
  answers: AnswerService;
  /** Validates structured answers against the caller's schema (docs/structured-answers.md). */
  schemas: SchemaService;
  /** Counts a local answer's usage (`localAnswer`). */
  tokens: TokenCounter;
  /** Background answers: where a `background` delivery's logs live, and what `resume` takes over. */
  background: BackgroundResponses;
  modeField: string;
  ids: Ids;
  /** Who started each query: recorded and checked where the upstream credential is shared (docs/governance.md#whose-query-it-is). */
  owners: QueryOwners;
  /** The `query` create fields a client may send under a shared upstream credential (`SHARED_KEY_QUERY_FIELDS`). */
  sharedKeyQueryFields: ReadonlySet<string>;
  /** Usage per account, workspace, mode and day (docs/governance.md#usage), charged with the meter; undefined when usage is not counted. */
  ledger?: UsageLedger | undefined;
  /** What an answer of each mode is expected to produce (`RATE_LIMIT_ANSWER_TOKENS`): what one that ends early is charged at least. */
  answerTokens: Record<Mode, number>;
  /** The key's limits, whose reservation a background answer taken over settles (`RateLimits.settleHeld`); undefined without limits. */
  rateLimits?: Pick<RateLimits, "settleHeld"> | undefined;
}

/** A structured answer as asked: the request's plan input, what it asks in structure, and how its repair turn is planned. */
interface StructuredAsk {
  input: PlanInput;
  request: StructuredRequest;
  planning: PlanOptions;
}

/** Who carries a background answer on: the retrieving caller (its credential follows the query) and its admission, handed over to the answer. */
export interface Resumer {
  identity: Identity;
  admission: Admitted;
}

/**
 * The answer runner (docs/architecture.md#one-runner-one-admission): what every answer does, in
 * one place, whatever its dialect and however long it lives. It plans an admitted request's answer
 * first (`plan`: the queries and their ids, nothing asked), and then runs the plan with the
 * delivery the route built from it (`run`): it tells the request's context, starts the span,
 * decides once whether the usage is needed, starts the answer (`AnswerService.start`), counts and
 * charges its usage once, and hands it to the delivery, whose loop follows its events through the
 * dialect's encoder, remembers the turn before the last bytes, and writes (`json`, `sse`,
 * `collect`, `background`). It never calls back into a route and never touches a response: what
 * it writes to is the delivery's. It also gives the adapter's own answers (`answerLocally`) and
 * carries on a background answer whose replica is gone (`resume`). Routes only read their own
 * request shape.
 */
export class AnswerRunner {
  constructor(private readonly options: AnswerRunnerOptions) {}

  /** What its deliveries use of the adapter (a route that writes a stream of its own uses the same). */
  get context(): DeliveryContext {
    return this.options;
  }

  /** Plans an admitted request's answer: its queries, their ids, what it continues. Nothing is asked or recorded yet. */
  plan(order: AnswerOrder): PlannedAnswer {
    const planning = this.planOptions(order.identity);
    const plan = planQueries(order.input, planning);
    const queryIds = plan.queries.map((query) => query.queryId);
    const [queryId = ""] = queryIds;
    return { order, plan, queryIds, queryId, planning };
  }

  /**
   * Runs a planned answer into its delivery: the caller's right to the query it names checked,
   * the request's context told, the span started, the queries created, the usage counted and
   * charged once, and the delivery's result returned.
   */
  async run<Result>(planned: PlannedAnswer, delivery: Delivery<Result>, delivering: Delivering = {}): Promise<Result> {
    const { order, plan, queryIds, planning } = planned;
    const { context, identity, workspace, meter, input } = order;
    // Only under a shared upstream credential; otherwise nothing is checked or kept (docs/governance.md#whose-query-it-is).
    const owning = identity.sharedUpstream ? await this.owned(order, queryIds) : undefined;
    context.answering({ workspace, mode: plan.mode, queryIds, continued: plan.continued });
    delivery.planned?.(queryIds);
    const { principal, account: asker } = identity;
    const trace = context.traceAnswer({ ...order.spanStart, mode: plan.mode, workspace, principal, account: asker.id });
    if (delivering.respondedAs !== undefined) trace.respondedAs(delivering.respondedAs);
    // A client leaving stops the answer, unless the answer outlives the request (a background one: only a cancel stops it).
    const controller = order.controller ?? (delivery.outlivesRequest ? new AbortController() : context.abortWhenLeft());
    const { ledger } = this.options;
    // Usage is counted when the client is told it, a token limit or the ledger charges it, or an audit record holds it;
    // a sampled span asks for it itself (AnswerTrace.delivered), an unsampled one never does.
    const counted = ledger !== undefined || context.audited;
    const usageNeeded = delivery.reportsUsage || meter.countsTokens || counted;
    const job = { plan, caller: callerOf(identity, workspace), controller, usageNeeded, trace };
    // From here the answer is charged however it ends (docs/rate-limits.md#reservations), even when its client
    // leaves while its queries are created; one whose queries could not be created is settled to nothing.
    meter.asked();
    // The queries are created under the answer's span: the upstream client finds it in the adapter's context.
    // The owners are recorded while the queries are created: the client hears of their ids only after both.
    const creating = trace.within(() => this.options.answers.start(job));
    const [starting, recording] = await Promise.allSettled([creating, owning?.recorded]);
    if (starting.status === "rejected") {
      meter.charge(NOTHING_USED);
      throw starting.reason;
    }
    if (recording.status === "rejected") throw recording.reason;
    const first = starting.value;
    const started = input.structured ? this.structured(first, job, { input, request: input.structured, planning }, order.markers === "strip") : first;
    // Followed on the side for the audit trail when answers are audited (docs/governance.md#the-audit-trail).
    const answer = context.follow(started, plan.prompt);
    const account = ledger && ((usage: TokenUsage) => ledger.charge(asker, workspace, plan.mode, usage));
    const expected = this.options.answerTokens[plan.mode];
    const { remember } = delivering;
    const run = metered(answer, { meter, account, trace, controller, usageNeeded, remember, expected, counted: started });
    const delivered = delivery.deliver(run, this.options);
    // The answer ends with its delivery, unless it outlives the request (its background run ends it); with nothing to charge, it ends unseen.
    const charged = meter.countsTokens || account !== undefined;
    return delivery.outlivesRequest || !charged ? delivered : delivered.finally(() => run.ended());
  }

  /** How a caller's queries are planned: under a shared upstream credential, only the listed create fields pass (docs/governance.md#whose-query-it-is). */
  private planOptions(identity: Identity): PlanOptions {
    const { modeField, ids, sharedKeyQueryFields } = this.options;
    return { modeField, newQueryId: ids.query, allowedCreateFields: identity.sharedUpstream ? sharedKeyQueryFields : undefined };
  }

  /**
   * Under a shared upstream credential (docs/governance.md#whose-query-it-is): refuses a `query_id`
   * the caller did not start (a 404 before anything is asked of the workspace), then records the
   * caller as the owner of every query of the plan, the write under way while they are created.
   * (With the client's own credential upstream, the workspace decides, and nothing is kept.)
   */
  private async owned(order: AnswerOrder, queryIds: readonly string[]): Promise<{ recorded: Promise<void> }> {
    const { identity, workspace, input } = order;
    const owner = { principal: identity.principal, workspace };
    if (order.namesQuery && input.continueQueryId) await this.options.owners.check(input.continueQueryId, owner);
    return { recorded: this.options.owners.record(queryIds, owner) };
  }

  /**
   * A structured answer (docs/structured-answers.md#what-comes-back): the first turn judged against
   * the caller's schema, and when it does not match, the repair turn asked in the same workspace
   * thread (the same query id, under the same span, controller and caller), before the delivery
   * gets one content block.
   */
  private structured(first: RunningAnswer, job: AnswerJob, asked: StructuredAsk, strip: boolean) {
    const [queryId] = first.queryIds;
    const { input, request, planning } = asked;
    const repair = (content: string) => {
      const { mode, createFields, from } = input;
      const continuing = { prompt: content, mode, choices: 1, continueQueryId: queryId, createFields, from };
      const plan = planQueries(continuing, planning);
      return job.trace.within(() => this.options.answers.start({ ...job, plan }));
    };
    return structuredAnswer({ first, repair }, request, { validation: this.options.schemas, strip });
  }

  /**
   * Delivers an answer the adapter gives itself (a chat UI's housekeeping, docs/chat-ui-tasks.md):
   * no plan, no query, no span, nothing charged; encoded and written like any other.
   */
  answerLocally<Result>(job: LocalAnswerJob, delivery: Delivery<Result>): Promise<Result> {
    const answer = localAnswer(job, this.options.tokens);
    const controller = new AbortController();
    const parts = { meter: NOT_METERED, trace: UNTRACED_ANSWER, controller, usageNeeded: delivery.reportsUsage };
    const run = metered(answer, parts);
    return delivery.deliver(run, this.options);
  }

  /**
   * Carries on a background answer whose replica is gone (docs/responses-api.md#background-mode):
   * takes its lease, parses the state its dialect left in the record (`resumption.schema`: a state
   * that does not parse is refused and the answer ends failed, never trusted), brings the encoder
   * to the end of its log, and follows the workspace query (the truth) from there with the
   * caller's credential, through the same stream loop into the same log. False when there was
   * nothing to take over (it ended, runs here, or another replica holds it) or it was refused.
   */
  async resume<State>(record: BackgroundRecord, caller: Resumer, resumption: Resumption<State>): Promise<boolean> {
    const { background, logger } = this.options;
    const release = caller.admission.handOver();
    try {
      const adopted = await background.adopt(record);
      if (!adopted) {
        release();
        return false;
      }
      const state = resumption.schema.safeParse(record.resume);
      const refusal = state.success ? (resumption.refusal?.(state.data) ?? null) : "its stored state does not parse";
      const resumed = state.success && !refusal ? resumption.resume(state.data, adopted.frames) : null;
      if (!resumed) {
        const reason = refusal ?? "its event log ends where the answer cannot be carried on (after its citations)";
        logger.warn({ responseId: record.id, reason }, "background answer could not be taken over");
        await adopted.refuse(resumption.refused(record, `The background answer could not be carried on after its replica stopped: ${reason}`));
        release();
        return false;
      }
      const { encoder, prompt, mode, remember } = resumed;
      const [sent] = encoder.sent();
      const controller = new AbortController();
      // Taken over from a replica that died: its span died with it, and nothing is charged twice.
      const answer = this.options.answers.follow({
        queryId: record.queryId,
        prompt,
        mode,
        sent: { text: sent?.content ?? "", reasoning: sent?.reasoning ?? "" },
        caller: callerOf(caller.identity, record.workspace),
        controller,
        usageNeeded: true,
        trace: UNTRACED_ANSWER,
      });
      // The usage the dead replica never charged goes to its owner's account (the retrieving caller is its owner),
      // and settles the reservation it held in its owner's quotas.
      const { ledger } = this.options;
      const owner = caller.identity.account;
      const account = ledger && ((usage: TokenUsage) => ledger.charge(owner, record.workspace, mode, usage));
      const meter = this.heldMeter(record, record.reservation);
      const expected = this.options.answerTokens[mode];
      const parts = { meter, account, trace: UNTRACED_ANSWER, controller, usageNeeded: true, remember, expected };
      const run = metered(answer, parts);
      runInBackground(adopted.carryOn(encoder, controller), run, encoder, { logger, release });
      return true;
    } catch (error) {
      release();
      throw error;
    }
  }

  /** The meter of a background answer taken over: it settles the reservation the replica that started it held (none: nothing to settle). */
  private heldMeter(record: BackgroundRecord, held: HeldReservation | undefined): UsageMeter {
    const { rateLimits } = this.options;
    if (!held || !rateLimits) return NOT_METERED;
    const { principal, workspace } = record;
    const charge = (usage: TokenUsage) => {
      rateLimits.settleHeld(principal, workspace, held, usage.promptTokens + usage.completionTokens);
    };
    return { countsTokens: true, charge, asked: () => undefined };
  }
}

/** The usage of an answer whose queries could not be created: the workspace was asked nothing. */
const NOTHING_USED: TokenUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 };

/** Who the upstream is asked as: the caller's upstream credential, in the workspace (its key names the shared poller). */
function callerOf(identity: Identity, workspace: string): Caller {
  return { credential: identity.upstreamCredential, workspace, credentialKey: identity.upstreamKey };
}
