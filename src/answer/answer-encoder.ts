import type { SseFrame } from "../core/sse-frame.js";
import type { AdapterError } from "../errors/adapter-error.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "./answer-events.js";

/**
 * A dialect's encoder of a whole (non-streamed) answer: pure and synchronous. The runner feeds it
 * every event but `failed` (which becomes an HTTP error), counts usage over what it `sent()`,
 * and writes its `body`.
 */
export interface BodyEncoder<Body> {
  add(event: AnswerEvent): void;
  sent(): ChoiceSent[];
  body(usage: TokenUsage): Body;
}

/**
 * A dialect's encoder of a streamed answer: pure and synchronous, with its per-request state
 * inside. The runner writes `open()`'s frames, then each event's, then counts usage over what it
 * `sent()` when `needsUsage`, and writes `close()`'s; after a failure, `fail()`'s instead.
 */
export interface StreamEncoder {
  readonly needsUsage: boolean;
  open(): SseFrame[];
  encode(event: AnswerEvent): SseFrame[];
  sent(): ChoiceSent[];
  close(usage: TokenUsage | undefined): SseFrame[];
  /** The frames that end a stream that failed after it began (also used at shutdown). */
  fail(error: AdapterError): SseFrame[];
}
