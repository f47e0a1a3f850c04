import type { SseFrame } from "../../core/sse-frame.js";
import type { ResponseMeta } from "./response-meta.js";
import { ResponseStreamEncoder } from "./response-stream-encoder.js";

/**
 * A stream encoder brought to the end of an event log it (on another replica) wrote: the log's
 * deltas fed again as the events they came from, which gives the same frames with the same
 * numbers. Null when that cannot be: the log does not match, or it reached the citations (the
 * answer's end, which cannot be encoded twice).
 */
export function resumeStreamEncoder(
  meta: ResponseMeta,
  now: () => number,
  frames: readonly SseFrame[],
): ResponseStreamEncoder | null {
  const encoder = new ResponseStreamEncoder(meta, now);
  let count = encoder.open().length;
  for (const frame of frames) {
    const data = frame.data as { type?: string; delta?: string };
    if (data.type === "response.reasoning_summary_text.delta") {
      count += encoder.encode({ type: "reasoning", choice: 0, text: data.delta ?? "", steps: [] }).length;
    } else if (data.type === "response.output_text.delta" || data.type === "response.function_call_arguments.delta") {
      count += encoder.encode({ type: "text", choice: 0, text: data.delta ?? "" }).length;
    } else if (data.type === "response.output_text.done" || data.type === "response.function_call_arguments.done") {
      return null;
    }
  }
  return count === frames.length ? encoder : null;
}
