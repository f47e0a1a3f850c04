import type { ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { ChoiceSent, TokenUsage } from "../../answer/answer-events.js";
import type { RunningAnswer } from "../../answer/running-answer.js";
import type { AnswerTrace } from "../../telemetry/answer-trace.js";
import type { Lifecycle } from "../lifecycle.js";
import type { RequestContext } from "../request-context.js";

/**
 * Told what the client is about to receive once the answer is whole and encoded, before its last
 * bytes go (the JSON body, or the stream's closing frames): the thread memory and stored responses
 * are written here, and the answer ends when the returned promise settles — so that the client's
 * next request, to any replica, finds them (docs/architecture.md#redis-down-or-slow). The callee
 * bounds the wait, logs its failures, and never rejects.
 */
export type BeforeAnswerEnds = (sent: ChoiceSent[]) => Promise<void>;

/** What admission hands the runner for the key's token limits (`http/admission.ts`, docs/rate-limits.md#reservations). */
export interface UsageMeter {
  /** Whether the answer's tokens count (`RATE_LIMIT_TPM`, `_TPD`, `_TPMO`): its usage is then counted even when the client does not ask for it. */
  readonly countsTokens: boolean;
  /** Settles the answer's reservation to its usage (called once per answer, by the runner). */
  charge(usage: TokenUsage): void;
  /**
   * The workspace is being asked (the answer's queries are being created): from now on the runner
   * settles the reservation however the answer ends. Before, the request's end gives it back.
   */
  asked(): void;
}

/** A meter for an answer nothing is charged for (no token limit, a chat UI's housekeeping). */
export const NOT_METERED: UsageMeter = { countsTokens: false, charge: () => undefined, asked: () => undefined };

/**
 * One answer being delivered, as a delivery sees it: the running answer, whether its usage is
 * needed (decided once by the runner), its usage counted and charged at most once however many
 * times it is asked for, its trace, its controller, and what to do before the last bytes.
 */
export interface AnswerRun {
  readonly answer: RunningAnswer;
  readonly meter: UsageMeter;
  readonly trace: AnswerTrace;
  /** Aborts the answer's queries: a client leaving does it, unless the delivery outlives the response (then a cancel does). */
  readonly controller: AbortController;
  readonly remember: BeforeAnswerEnds | undefined;
  /**
   * Whether the answer's usage is counted whatever its trace: the client is told it
   * (`Delivery.reportsUsage`), a token limit or the ledger charges it, or an audit record holds it. A delivery that does not report usage
   * counts it after the last bytes when this says so, and otherwise hands its trace the count to
   * ask for (a sampled span asks; an unsampled one never does).
   */
  readonly usageNeeded: boolean;
  /** The answer's usage over what it sent: counted once (memoised) and charged to the meter once. */
  usage(sent: readonly ChoiceSent[]): Promise<TokenUsage>;
  /**
   * The answer has ended, however: one whose usage was never counted (its client left, it failed,
   * timed out or was shut down, while the workspace query may run on) is charged then, for what
   * the workspace was asked and produced (docs/rate-limits.md#reservations). Called by whatever
   * ends the answer: the runner after a delivery, or the background run.
   */
  ended(): void;
}

/** What a delivery may use of the adapter. */
export interface DeliveryContext {
  readonly lifecycle: Lifecycle;
  readonly logger: Logger;
}

/** Where an HTTP delivery writes: the response, and the request's context (its close ends the stream's keep-alives). */
export interface HttpTarget {
  readonly response: ServerResponse;
  readonly context: RequestContext;
}

/**
 * How an answer reaches its client: a JSON body (`json`), a stream of server-sent events (`sse`),
 * collected for a tool result with progress (`collect`, MCP), or an event log that outlives the
 * request (`background`, `detached`). Where it writes is its own (an HTTP response, a log, a tool
 * result): the runner hands it the run and never a response. A new dialect brings an encoder and
 * picks one; a delivery that changes the answer before it is encoded wraps one.
 */
export interface Delivery<Result> {
  /** Whether the client is told the answer's usage: it is then counted (a long prompt while the upstream answers; answer-service.ts). */
  readonly reportsUsage: boolean;
  /** Whether the answer goes on after the request ends (background): the client leaving does not stop it. */
  readonly outlivesRequest?: boolean;
  /**
   * Told the answer's query ids once the runner has settled them, before any is created: an HTTP
   * delivery of the OpenAI dialects names them in `Service-Query-Id` (`nameQueries`); MCP says them in its result.
   */
  planned?(queryIds: readonly string[]): void;
  deliver(run: AnswerRun, context: DeliveryContext): Promise<Result>;
}

/** `Service-Query-Id`: the queries a response answers from (docs/chat-completions.md), joined with ", " for `n` > 1. */
export function nameQueries(response: ServerResponse, queryIds: readonly string[]): void {
  response.setHeader("service-query-id", queryIds.join(", "));
}
