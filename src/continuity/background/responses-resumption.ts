import { z } from "zod";
import type { SseFrame } from "../../core/sse-frame.js";
import { MODES } from "../../core/modes.js";
import { resumeStreamEncoder } from "../../dialects/responses/resume-stream-encoder.js";
import { type StoredResponses, turnSchema } from "../responses/stored-responses.js";
import type { ResponseBody } from "./background-log.js";
import type { BackgroundRecord } from "./background-store.js";
import type { Resumption } from "./resumption.js";

/** What a Responses background answer's record keeps for a replica that takes it over: its query's mode and prompt, and the turn to store. */
export const backgroundResumeSchema = z.object({
  mode: z.enum(MODES),
  prompt: z.string(),
  turn: turnSchema,
});
/** What a Responses background answer's record keeps for a replica that takes it over. */
export type BackgroundResume = z.infer<typeof backgroundResumeSchema>;

/**
 * How a Responses background answer is carried on by another replica: the stream encoder brought
 * to the end of the log (`resumeStreamEncoder`), and the turn stored when it completes.
 */
export function responsesResumption(stored: Pick<StoredResponses, "storeTurn">, seconds: () => number): Resumption<BackgroundResume> {
  return {
    schema: backgroundResumeSchema,
    // A structured answer is judged and repaired by the replica that asked (docs/structured-answers.md):
    // following its query from here would deliver the workspace's text unvalidated.
    refusal: (state) =>
      state.turn.meta.textFormat || state.turn.meta.call ? "a structured answer is validated only by the replica that asked for it, so it cannot be carried on" : null,
    resume(state, frames) {
      const encoder = resumeStreamEncoder(state.turn.meta, seconds, frames);
      if (!encoder) return null;
      return { encoder, prompt: state.prompt, mode: state.mode, remember: () => stored.storeTurn(state.turn, encoder) };
    },
  };
}

/**
 * A running background response with what its answer has sent so far (its output items, still in
 * progress), read from its event log; the record's object when the log or its state cannot say more.
 */
export function responseInProgress(record: BackgroundRecord, frames: readonly SseFrame[], seconds: () => number): ResponseBody {
  const state = backgroundResumeSchema.safeParse(record.resume);
  const encoder = state.success ? resumeStreamEncoder(state.data.turn.meta, seconds, frames) : null;
  return encoder ? encoder.current(null) : record.response;
}
