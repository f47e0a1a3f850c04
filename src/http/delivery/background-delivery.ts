import type { Logger } from "pino";
import type { BackgroundEncoder, BackgroundLog } from "../../continuity/background/background-log.js";
import type { BackgroundResponses } from "../../continuity/background/background-responses.js";
import type { BackgroundRecord } from "../../continuity/background/background-store.js";
import { ClientClosedError, RequestValidationError, toAdapterError } from "../../errors/adapter-error.js";
import { UNTRACED_ANSWER } from "../../telemetry/answer-trace.js";
import type { Admitted } from "../admission.js";
import { sendUncached } from "../error-response.js";
import { type KeepAliveSweep, SseWriter } from "../sse-writer.js";
import { type AnswerRun, type Delivery, type DeliveryContext, type HttpTarget, nameQueries } from "./delivery.js";
import { streamInto } from "./stream-delivery.js";
import { errorMessage } from "../../util/error-message.js";
import type { SseFrame } from "../../core/sse-frame.js";

/** A background answer to start (`background`): its record, the admission it holds while it runs, and how its client is answered. */
export interface BackgroundJob {
  responses: BackgroundResponses;
  /** The record to create; its response object is the encoder's, in progress. */
  record: Omit<BackgroundRecord, "response">;
  /** The request's admission, handed over to the answer: its place under the caps and its key's slot are held until it ends. */
  admission: Admitted;
  /** Set when the client asked for a stream: it follows the event log at once (else it gets the response in progress). */
  follow: KeepAliveSweep | undefined;
  /** Whether a frame of the log ends it (the dialect's terminal events): a follow stops there. */
  isTerminal: (frame: SseFrame) => boolean;
}

/**
 * The background delivery (docs/responses-api.md#background-mode): the answer's stream goes through
 * the runner's one stream loop into an event log any replica follows, and outlives the request
 * (only a cancel stops it); the client gets the response in progress at once, or follows the log
 * when it asked for a stream.
 */
export function background(encoder: BackgroundEncoder, job: BackgroundJob, target: HttpTarget): Delivery<void> {
  const started = detached(encoder, job);
  return {
    ...started,
    planned: (queryIds) => nameQueries(target.response, queryIds),
    async deliver(run, context) {
      const record = await started.deliver(run, context);
      const log = { id: record.id, after: -1, isTerminal: job.isTerminal };
      if (job.follow) await streamBackground(target, job.responses, log, { ...context, sweep: job.follow });
      else sendUncached(target.response, record.response);
    },
  };
}

/**
 * A background answer started and left running (its record durable before this resolves), the
 * request answered by the caller with the record it gives: the background delivery without its
 * reply, for a dialect whose client is answered in its own shape (an MCP task, docs/mcp.md#long-answers-as-tasks).
 */
export function detached(encoder: BackgroundEncoder, job: Omit<BackgroundJob, "follow" | "isTerminal">): Delivery<BackgroundRecord> {
  return {
    reportsUsage: true,
    outlivesRequest: true,
    async deliver(run, context) {
      const release = job.admission.handOver();
      const { reservation } = job.admission;
      const record = { ...job.record, response: encoder.current(null), ...(reservation ? { reservation } : {}) };
      let log: BackgroundLog;
      try {
        log = await job.responses.open(record, encoder, run.controller);
      } catch (error) {
        run.controller.abort();
        run.ended();
        release();
        throw error;
      }
      runInBackground(log, run, encoder, { logger: context.logger, release });
      return record;
    },
  };
}

/**
 * Runs a background answer into its log without waiting for it (a new one, or one taken over): the
 * runner's stream loop, then the log closed, the answer ended (charged, if its usage was not counted:
 * a cancel) and the admission released, however it ended. Its span
 * belongs to the request that started it, which has ended: nothing is reported to it.
 */
export function runInBackground(
  log: BackgroundLog,
  run: AnswerRun,
  encoder: BackgroundEncoder,
  options: { logger: Logger; release: () => void },
): void {
  const { logger, release } = options;
  void streamInto(log, { ...run, trace: UNTRACED_ANSWER }, encoder, { opening: [], logger, logFields: { responseId: log.id } })
    .catch((error: unknown) => logger.warn({ responseId: log.id, err: { message: errorMessage(error) } }, "background answer failed"))
    .finally(() => {
      log.close();
      run.ended();
      release();
    });
}

/** A background response's log to follow: its id, the last `sequence_number` the client has, and its dialect's terminal events. */
export interface FollowedLog {
  id: string;
  after: number;
  isTerminal: (frame: SseFrame) => boolean;
}

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
  target: HttpTarget,
  responses: BackgroundResponses,
  log: FollowedLog,
  context: StreamContext,
): Promise<void> {
  const { id, after } = log;
  const stop = new AbortController();
  const writer = new SseWriter(target, context.sweep, () => []);
  target.context.whenClosed(() => stop.abort());
  writer.open();
  const unregister = context.lifecycle.trackStream(writer);
  const frames = responses.follow(id, after, stop.signal, log.isTerminal);
  try {
    for await (const frame of frames) {
      await writer.send([frame]);
      if (writer.isClosed) return;
    }
    await writer.end();
  } catch (error) {
    const failure = toAdapterError(error);
    if (!(failure instanceof ClientClosedError)) context.logger.warn({ responseId: id, err: { message: failure.message } }, "background follow failed");
    await writer.end();
  } finally {
    stop.abort();
    unregister();
    await frames.return(undefined);
  }
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
