import type { ChoiceSent } from "../../answer/answer-events.js";
import type { SseFrame } from "../../core/sse-frame.js";
import type { Mode } from "../../core/modes.js";
import type { z } from "zod";
import type { BackgroundEncoder } from "./background-log.js";
import type { BackgroundEnding } from "./background-responses.js";
import type { BackgroundRecord } from "./background-store.js";

/** A background answer as far as its log went, ready to go on (`Resumption.resume`). */
export interface Resumed {
  /** The dialect's encoder brought to the end of the log: it numbers the next frame as the log's next. */
  encoder: BackgroundEncoder;
  /** The query's prompt (its usage counts it) and mode (its deadline). */
  prompt: string;
  mode: Mode;
  /** What to remember once the answer is whole (the stored response, the conversation). Never rejects. */
  remember: (sent: ChoiceSent[]) => Promise<void>;
}

/**
 * What a dialect gives the runner to carry on one of its background answers after the replica
 * that ran it is gone (docs/responses-api.md#background-mode): the schema of the state it left in
 * the record, and how to bring its encoder to the end of the log.
 */
export interface Resumption<State> {
  /** The dialect's state in the record (`BackgroundRecord.resume`): a record whose state does not parse is refused, never trusted. */
  readonly schema: z.ZodType<State>;
  /** Why an answer with this state is never carried on (the answer then ends failed with it), or null. */
  refusal?(state: State): string | null;
  /** The answer as far as `frames` went; null when the log cannot be carried on. */
  resume(state: State, frames: readonly SseFrame[]): Resumed | null;
  /** How an answer that cannot be carried on ends, failed with `message` (its state did not parse, or was refused), in the dialect's shape. */
  refused(record: BackgroundRecord, message: string): BackgroundEnding;
}
