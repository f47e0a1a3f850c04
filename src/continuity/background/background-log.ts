import type { Logger } from "pino";
import type { StreamEncoder } from "../../answer/answer-encoder.js";
import type { FrameSink } from "../../answer/frame-sink.js";
import type { SseFrame } from "../../core/sse-frame.js";
import type { AdapterError } from "../../errors/adapter-error.js";
import type { BackgroundRecord } from "./background-store.js";
import { errorMessage } from "../../util/error-message.js";

/** A response object as a background answer handles it: it only reads and sets `status`. */
export type ResponseBody = BackgroundRecord["response"];

/**
 * The stream encoder as a background answer drives it: its frames, and the response object as it
 * stands (in progress, failed) or `finished` once `close` made it complete.
 */
export interface BackgroundEncoder extends StreamEncoder {
  current(end: { status: "failed"; error: AdapterError; at: number } | null): ResponseBody;
  readonly finished: ResponseBody | undefined;
}

/** What a log writes through (`BackgroundResponses`): the store's append and end, with the followers waiting here woken. */
export interface LogWriter {
  append(id: string, frames: readonly SseFrame[]): Promise<boolean>;
  end(id: string, response: ResponseBody, frames: readonly SseFrame[]): Promise<boolean>;
  /** Seconds since the epoch, for a failed response's time. */
  seconds(): number;
  readonly logger: Logger;
}

/**
 * A background answer's event log as the sink of the runner's stream loop
 * (docs/responses-api.md#background-mode): each event's frames appended for any replica to follow,
 * and the closing or failure frames appended together with the response's final object, once. An
 * append the store refuses (the answer was cancelled elsewhere, or taken over by a replica that
 * thought this one gone) closes the log and stops the answer.
 */
export class BackgroundLog implements FrameSink {
  private refused = false;

  constructor(
    private readonly writer: LogWriter,
    readonly id: string,
    private readonly encoder: BackgroundEncoder,
    /** The answer's controller: aborted by a cancel (from any replica), a lost lease or a shutdown, never by a client leaving. */
    private readonly controller: AbortController,
    /** Told once the answer stopped running here, however it ended. */
    private readonly onClose: () => void,
  ) {}

  get isClosed(): boolean {
    return this.refused || this.controller.signal.aborted;
  }

  async send(frames: readonly SseFrame[]): Promise<void> {
    if (frames.length === 0 || this.isClosed) return;
    if (await this.writer.append(this.id, frames)) return;
    this.refused = true;
    this.controller.abort();
  }

  async fail(error: AdapterError): Promise<void> {
    const response = this.encoder.current({ status: "failed", error, at: this.writer.seconds() });
    try {
      await this.writer.end(this.id, response, this.encoder.fail(error));
    } catch (failure) {
      this.writer.logger.warn({ responseId: this.id, err: { message: errorMessage(failure) } }, "background answer could not be ended as failed");
    }
  }

  end(closing: readonly SseFrame[]): Promise<boolean> {
    return this.writer.end(this.id, this.encoder.finished ?? this.encoder.current(null), closing);
  }

  /** The answer stopped running here (its loop is over): its lease is no longer renewed. */
  close(): void {
    this.onClose();
  }
}
