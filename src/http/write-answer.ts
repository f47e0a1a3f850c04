import type { ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { BodyEncoder, StreamEncoder } from "../answer/answer-encoder.js";
import type { ChoiceSent } from "../answer/answer-events.js";
import type { RunningAnswer } from "../answer/answer-service.js";
import { ClientClosedError, toAdapterError } from "../errors/adapter-error.js";
import { sendJson } from "./error-response.js";
import type { Lifecycle } from "./lifecycle.js";
import type { ResponseFacts } from "./request-log.js";
import { type KeepAliveSweep, SseWriter } from "./sse-writer.js";

/**
 * Told what the client is about to receive once the answer is whole and encoded, before its last
 * bytes go (the JSON body, or the stream's closing frames): conversations and stored responses are
 * written here, and the answer ends when the returned promise settles — so that the client's next
 * request, to any replica, finds them (docs/architecture.md#redis-down-or-slow). The callee bounds
 * the wait, logs its failures, and never rejects.
 */
export type BeforeAnswerEnds = (sent: ChoiceSent[]) => Promise<void>;

/**
 * Writes a non-streamed answer (docs/architecture.md#data-flow-of-one-request): every event into the
 * dialect's encoder, usage counted over what it holds, one JSON body. A `failed` event, or an
 * answer that never finished (the client left), is thrown for the edge to map.
 */
export async function sendAnswer<Body>(
  response: ServerResponse,
  answer: RunningAnswer,
  encoder: BodyEncoder<Body>,
  beforeEnd?: BeforeAnswerEnds,
): Promise<Body> {
  let finished = 0;
  for await (const event of answer.events(false)) {
    if (event.type === "failed") throw event.error;
    if (event.type === "finished") finished += 1;
    encoder.add(event);
  }
  if (finished < answer.queryIds.length) throw new ClientClosedError();
  const sent = encoder.sent();
  const usage = await answer.usage(sent);
  const body = encoder.body(usage);
  await beforeEnd?.(sent);
  response.setHeader("cache-control", "no-store");
  sendJson(response, body);
  answer.trace?.delivered(sent, usage);
  return body;
}

/** What streaming an answer needs from the adapter. */
export interface StreamContext {
  sweep: KeepAliveSweep;
  facts: ResponseFacts;
  lifecycle: Lifecycle;
  logger: Logger;
}

/**
 * Streams an answer as server-sent events: the encoder's opening frames, each event's frames as
 * it comes, usage when the encoder reports it, the closing frames. After the headers, a failure
 * is the dialect's failure frames, never a throw; a client that leaves ends it quietly (the
 * answer's controller then stops following the queries).
 */
export async function streamAnswer(
  response: ServerResponse,
  answer: RunningAnswer,
  encoder: StreamEncoder,
  context: StreamContext,
  beforeEnd?: BeforeAnswerEnds,
): Promise<void> {
  const writer = new SseWriter(response, context.sweep, context.facts, (error) => encoder.fail(error));
  writer.open();
  const unregister = context.lifecycle.trackStream(writer);
  const events = answer.events(true);
  try {
    for (const frame of encoder.open()) await writer.send(frame);
    let finished = 0;
    for await (const event of events) {
      if (event.type === "failed") {
        if (event.error.status >= 500) context.logger.warn({ err: { message: event.error.message } }, "stream failed");
        await writer.fail(event.error);
        return;
      }
      if (event.type === "finished") finished += 1;
      for (const frame of encoder.encode(event)) await writer.send(frame);
      if (writer.isClosed) return;
    }
    if (finished < answer.queryIds.length || writer.isClosed) return;
    const sent = encoder.sent();
    const usage = encoder.needsUsage ? await answer.usage(sent) : undefined;
    const closing = encoder.close(usage);
    await beforeEnd?.(sent);
    for (const frame of closing) await writer.send(frame);
    if (writer.isClosed) return;
    writer.end();
    // A traced answer's span carries its usage even when the client did not ask for it (counted after the last frame).
    const { trace } = answer;
    if (trace) trace.delivered(sent, usage ?? (trace.recording ? answer.usage(sent) : undefined));
  } catch (error) {
    const failure = toAdapterError(error);
    if (writer.isClosed || failure instanceof ClientClosedError) return;
    answer.trace?.fail(failure);
    context.logger.warn({ err: { message: failure.message } }, "stream failed");
    await writer.fail(failure);
  } finally {
    unregister();
    await events.return(undefined);
  }
}
