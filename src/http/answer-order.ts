import type { Identity } from "../auth/authenticate.js";
import type { PlanInput, PlanOptions, QueryPlan } from "../plan/plan-queries.js";
import type { AnswerStart } from "../telemetry/answer-facts.js";
import type { BeforeAnswerEnds, UsageMeter } from "./delivery/delivery.js";
import type { RequestContext } from "./request-context.js";

// What a route hands the answer runner (answer-runner.ts): an admitted request to plan, the plan it
// builds its delivery from, and what it adds to that delivery (docs/architecture/runner.md#plan-then-run).

/** An admitted answer request, as the runner needs it: its request's context, who asks, where, under which meter. */
export interface AnswerOrder {
  /** The request it answers (request-context.ts): an HTTP request's, or one with no response at all (a socket's message). */
  context: RequestContext;
  identity: Identity;
  workspace: string;
  meter: UsageMeter;
  /** What to plan: each dialect reads its own request into this. */
  input: PlanInput;
  /**
   * Whether `input.continueQueryId` is a `query_id` the client named (not one continuity found for
   * the caller): under a shared upstream credential it is continued only when the caller started it
   * (docs/governance.md#whose-query-it-is).
   */
  namesQuery?: boolean | undefined;
  /** What the answer's span starts with (the runner adds the mode, workspace, principal and account); the span starts only when tracing is on. */
  spanStart: Omit<AnswerStart, "mode" | "workspace" | "principal" | "account">;
  /** Aborts the answer's queries; by default when the client leaves (or never, for a delivery that outlives the request). */
  controller?: AbortController | undefined;
  /** A structured answer's citation markers inside the JSON's strings (`X-Structured-Citations`): kept unless `strip`. */
  markers?: "keep" | "strip" | undefined;
}

/**
 * An answer planned (`runner.plan`): the queries to create, their ids chosen by the adapter
 * (docs/upstream-assumptions.md), what it continues; nothing asked yet. What the route builds its
 * delivery and its turn to remember from, before `runner.run`.
 */
export interface PlannedAnswer {
  readonly order: AnswerOrder;
  readonly plan: QueryPlan;
  /** One id per choice, in order. */
  readonly queryIds: string[];
  /** The first choice's query id (the only one, but for chat's `n` > 1). */
  readonly queryId: string;
  readonly planning: PlanOptions;
}

/** What a route adds to the delivery of a planned answer: the id the client sees, and what to remember before the last bytes. */
export interface Delivering {
  /** The id the client sees (`chatcmpl-…`, `resp_…`, `task_…`), for the span. */
  respondedAs?: string | undefined;
  /** The turn to remember once the answer is whole (thread memory, a stored response): never rejects. */
  remember?: BeforeAnswerEnds | undefined;
}
