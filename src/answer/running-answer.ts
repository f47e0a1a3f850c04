import type { AnswerTrace } from "../telemetry/answer-trace.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "./answer-events.js";

/**
 * How closely `RunningAnswer.events` follows a query: `every-snapshot` (a stream: each snapshot's
 * steps and text as they come), `steps` (progress: the steps as they come, the text whole at the
 * end) or `final` (only each choice's final snapshot: the text whole).
 */
export type Following = "every-snapshot" | "steps" | "final";

/**
 * An answer whose queries exist upstream (`AnswerService.start`, `follow`), or that the adapter
 * gives itself (`localAnswer`): its events, and how to count its usage once the encoder says what
 * it sent. Every delivery reads only this, so it cannot tell where an answer comes from.
 */
export interface RunningAnswer {
  /** The query id of each choice, in order. */
  readonly queryIds: string[];
  /**
   * The answer's events (docs/architecture/runner.md#the-answer-events), as closely as `following` asks.
   * Ends after the last `finished`, after `failed`, or early and quietly when the client leaves.
   */
  events(following: Following): AsyncGenerator<AnswerEvent>;
  /** Token usage of what the encoder sent, counting the prompt once per choice. */
  usage(sent: readonly ChoiceSent[]): Promise<TokenUsage>;
  /** The answer's trace (`AnswerJob.trace`): the delivery reports what it delivered. */
  readonly trace: AnswerTrace;
}
