import type { SseFrame } from "../core/sse-frame.js";
import type { AdapterError } from "../errors/adapter-error.js";

/**
 * Where a streamed answer's frames go (docs/architecture/runner.md#one-runner-one-admission): a client's
 * socket (the SSE writer) or a background answer's event log, which any replica follows. The
 * runner's one stream loop writes to either the same way, so a background answer is delivered
 * exactly as a stream is.
 */
export interface FrameSink {
  /** Whether nothing more can go: the client left, or the answer was cancelled or taken over elsewhere. */
  readonly isClosed: boolean;
  /** One event's frames, in order; resolves when the sink can take more. */
  send(frames: readonly SseFrame[]): Promise<void>;
  /** Ends an answer that failed after it began, with the dialect's failure frames (`StreamEncoder.fail`). Never rejects. */
  fail(error: AdapterError): Promise<void>;
  /** Ends the answer with its closing frames: true when they all went (the answer was delivered). */
  end(closing: readonly SseFrame[]): Promise<boolean>;
}
