import { z } from "zod";
import type { SseFrame } from "../../core/sse-frame.js";
import { MODES } from "../../core/modes.js";
import type { ResponseBody } from "../../continuity/background/background-log.js";
import type { BackgroundEnding } from "../../continuity/background/background-responses.js";
import { type BackgroundRecord, UNNUMBERED } from "../../continuity/background/background-store.js";
import type { Resumption } from "../../continuity/background/resumption.js";
import { resumeStreamEncoder } from "../../dialects/responses/resume-stream-encoder.js";
import { type ResponseTurns, turnSchema } from "./response-turns.js";

/** What a Responses background answer's record keeps for a replica that takes it over: its query's mode and prompt, and the turn to store. */
export const backgroundResumeSchema = z.object({
  mode: z.enum(MODES),
  prompt: z.string(),
  turn: turnSchema,
});
/** What a Responses background answer's record keeps for a replica that takes it over. */
export type BackgroundResume = z.infer<typeof backgroundResumeSchema>;

/** The event types that end a Responses stream, and so a background response's log: a follow stops there. */
const TERMINAL_TYPES: ReadonlySet<string> = new Set(["response.completed", "response.failed", "response.incomplete", "response.cancelled", "error"]);

/** Whether a frame ends a background response's log (docs/responses-api.md#background-mode). */
export function isResponseTerminal(frame: SseFrame): boolean {
  const type = (frame.data as { type?: unknown }).type;
  return typeof type === "string" && TERMINAL_TYPES.has(type);
}

/** How a background response ends when a client cancels it: `cancelled`, its log ending with `response.incomplete` carrying it (the Responses API streams no cancel event). */
export function cancelledResponse(record: BackgroundRecord): BackgroundEnding {
  const response = { ...record.response, status: "cancelled" };
  return { response, frames: [{ event: "response.incomplete", data: { type: "response.incomplete", sequence_number: UNNUMBERED, response } }] };
}

/** How a background response ends when no replica can carry it on: `failed`, with `message`. */
function failedResponse(record: BackgroundRecord, message: string): BackgroundEnding {
  const response: ResponseBody = { ...record.response, status: "failed", error: { code: "server_error", message } };
  return { response, frames: [{ event: "response.failed", data: { type: "response.failed", sequence_number: UNNUMBERED, response } }] };
}

/**
 * How a Responses background answer is carried on by another replica: the stream encoder brought
 * to the end of the log (`resumeStreamEncoder`), and the turn stored when it completes.
 */
export function responsesResumption(turns: Pick<ResponseTurns, "store">, seconds: () => number): Resumption<BackgroundResume> {
  return {
    schema: backgroundResumeSchema,
    // A structured answer is judged and repaired by the replica that asked (docs/structured-answers.md):
    // following its query from here would deliver the workspace's text unvalidated.
    refusal: (state) =>
      state.turn.meta.textFormat || state.turn.meta.call ? "a structured answer is validated only by the replica that asked for it, so it cannot be carried on" : null,
    resume(state, frames) {
      const encoder = resumeStreamEncoder(state.turn.meta, seconds, frames);
      if (!encoder) return null;
      return { encoder, prompt: state.prompt, mode: state.mode, remember: () => turns.store(state.turn, encoder) };
    },
    refused: failedResponse,
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
