import type { ServerResponse } from "node:http";
import type { BackgroundResponses } from "../continuity/background-responses.js";
import { ClientClosedError, RequestValidationError, toAdapterError } from "../errors/adapter-error.js";
import { sendJson } from "./error-response.js";
import type { DeliveryContext } from "./answer-runner.js";
import { type KeepAliveSweep, SseWriter } from "./sse-writer.js";

/** What following a background response needs of the adapter: a delivery's context and the keep-alive sweep. */
export interface StreamContext extends DeliveryContext {
  sweep: KeepAliveSweep;
}

/**
 * A background response's events to a client (docs/responses-api.md#background-mode), from the log
 * any replica reads: replayed after `after`, then followed live until the terminal event. The client
 * leaving stops only this follow; the answer goes on. `error` frames are never made here: a follow
 * that fails after its headers (Redis gone) just ends, and the client resumes from the last number.
 */
export async function streamBackground(
  response: ServerResponse,
  background: BackgroundResponses,
  id: string,
  after: number,
  context: StreamContext,
): Promise<void> {
  const stop = new AbortController();
  const writer = new SseWriter(response, context.sweep, context.facts, () => []);
  context.facts.whenClosed(response, () => stop.abort());
  writer.open();
  const unregister = context.lifecycle.trackStream(writer);
  const frames = background.follow(id, after, stop.signal);
  try {
    for await (const frame of frames) {
      await writer.send(frame);
      if (writer.isClosed) return;
    }
    writer.end();
  } catch (error) {
    const failure = toAdapterError(error);
    if (!(failure instanceof ClientClosedError)) context.logger.warn({ responseId: id, err: { message: failure.message } }, "background follow failed");
    writer.end();
  } finally {
    stop.abort();
    unregister();
    await frames.return(undefined);
  }
}

/** A background response's object at once (`in_progress` while it runs). */
export function sendBackground(response: ServerResponse, body: object): void {
  response.setHeader("cache-control", "no-store");
  sendJson(response, body);
}

/**
 * `starting_after` of a replayed or resumed stream: -1 when absent; a 422 when it is not an integer
 * of at least -1 (`loc` names it). (Past the log's last event, a background response's route
 * answers 400: nothing it has sent carries that number.)
 */
export function readStartingAfter(value: unknown): number {
  const after = value === undefined ? -1 : Number(value);
  if (!Number.isInteger(after) || after < -1) {
    throw new RequestValidationError([{ loc: ["query", "starting_after"], msg: "Input should be a valid integer", type: "int_parsing", input: value }]);
  }
  return after;
}
