import type { StreamEncoder } from "../../answer/answer-encoder.js";
import type { FrameSink } from "../../answer/frame-sink.js";
import type { SseFrame } from "../../core/sse-frame.js";
import { ClientClosedError, toAdapterError } from "../../errors/adapter-error.js";
import type { Logger } from "pino";
import { type KeepAliveSweep, SseWriter } from "../sse-writer.js";
import { type AnswerRun, type Delivery, type HttpTarget, nameQueries } from "./delivery.js";

/** What the stream loop says in the log when an answer fails after it began, and where it writes first. */
export interface StreamOptions {
  /** Frames that go before the answer's own (the encoder's opening frames), unless the sink holds them already. */
  opening: readonly SseFrame[];
  logger: Logger;
  /** What names the answer in a failure's log line (a background answer's response id). */
  logFields?: Record<string, string>;
}

/**
 * The one loop over a streamed answer's events (docs/architecture.md#one-runner-one-admission),
 * whatever its sink: a client's socket or a background answer's event log. The opening frames,
 * each event's frames as it comes, usage when the encoder reports it, what to remember, the closing
 * frames. After the first frame, a failure is the dialect's failure frames, never a throw; a sink
 * that closes (the client left, the answer was cancelled) ends it quietly. An answer whose usage the
 * encoder does not report is still counted after its last frame when the TPM limit needs it, or
 * when its span is sampled (the trace asks).
 */
export async function streamInto(sink: FrameSink, run: AnswerRun, encoder: StreamEncoder, options: StreamOptions): Promise<void> {
  const { answer, trace } = run;
  const { logger, logFields } = options;
  const events = answer.events("every-snapshot");
  try {
    await sink.send(options.opening);
    let finished = 0;
    for await (const event of events) {
      if (event.type === "failed") {
        if (event.error.status >= 500) logger.warn({ ...logFields, err: { message: event.error.message } }, "stream failed");
        await sink.fail(event.error);
        return;
      }
      if (event.type === "finished") finished += 1;
      await sink.send(encoder.encode(event));
      if (sink.isClosed) return;
    }
    if (finished < answer.queryIds.length || sink.isClosed) return;
    const sent = encoder.sent();
    const usage = encoder.needsUsage ? await run.usage(sent) : undefined;
    const closing = encoder.close(usage);
    // Charged as the stream ends even when the client did not ask for usage (the TPM limit).
    if (usage === undefined && run.usageNeeded) run.usage(sent).catch(() => undefined);
    await run.remember?.(sent);
    // A sampled span asks for the count (memoised: counted once); an unsampled one never does.
    if (await sink.end(closing)) trace.delivered(sent, usage ?? (() => run.usage(sent)));
  } catch (error) {
    const failure = toAdapterError(error);
    if (sink.isClosed || failure instanceof ClientClosedError) return;
    trace.fail(failure);
    logger.warn({ ...logFields, err: { message: failure.message } }, "stream failed");
    await sink.fail(failure);
  } finally {
    await events.return(undefined);
  }
}

/**
 * A streamed answer as server-sent events to its client (`streamInto` an `SseWriter`): a client
 * that leaves ends it quietly (the answer's controller then stops following the queries), and a
 * shutdown ends it with the dialect's failure frames.
 */
export function sse(encoder: StreamEncoder, target: HttpTarget, sweep: KeepAliveSweep): Delivery<void> {
  return {
    reportsUsage: encoder.needsUsage,
    planned: (queryIds) => nameQueries(target.response, queryIds),
    async deliver(run, context) {
      const writer = new SseWriter(target, sweep, (error) => encoder.fail(error));
      writer.open();
      const unregister = context.lifecycle.trackStream(writer);
      try {
        await streamInto(writer, run, encoder, { opening: encoder.open(), logger: context.logger });
      } finally {
        unregister();
      }
    },
  };
}
