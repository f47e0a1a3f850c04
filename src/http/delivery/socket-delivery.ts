import type { Duplex } from "node:stream";
import { WebSocket } from "ws";
import type { StreamEncoder } from "../../answer/answer-encoder.js";
import type { FrameSink } from "../../answer/frame-sink.js";
import type { SseFrame } from "../../core/sse-frame.js";
import type { AdapterError } from "../../errors/adapter-error.js";
import type { Delivery } from "./delivery.js";
import { streamInto } from "./stream-delivery.js";

/** Bytes queued on a socket past which the stream loop waits for them to be written (a slow reader holds back its answer, not the adapter's memory). */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * One streamed answer's frames onto a WebSocket (docs/responses-api.md#websocket-mode): each
 * event's data as one JSON text message, exactly the events the SSE stream sends, with the same
 * encoder and sequence numbers. It remembers whether the answer failed after it began (its
 * connection then evicts what the turn continued) and ends without closing the socket, which carries
 * the connection's next answer.
 */
export class SocketFrameSink implements FrameSink {
  private done = false;
  /** The error the answer failed with after its first frame, if it did. */
  failure: AdapterError | undefined;

  private corked = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly encoder: Pick<StreamEncoder, "fail">,
    /** The connection under the WebSocket (its upgrade request's socket): corked for a tick, so that a tick's frames go in one write. */
    private readonly connection: Pick<Duplex, "cork" | "uncork">,
  ) {}

  get isClosed(): boolean {
    return this.done || this.socket.readyState !== WebSocket.OPEN;
  }

  send(frames: readonly SseFrame[]): Promise<void> {
    return this.write(frames);
  }

  async fail(error: AdapterError): Promise<void> {
    this.failure ??= error;
    if (!this.isClosed) await this.write(this.encoder.fail(error)).catch(() => undefined);
    this.done = true;
  }

  async end(closing: readonly SseFrame[]): Promise<boolean> {
    if (this.isClosed) return false;
    await this.write(closing);
    this.done = true;
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends the frames; waits for them to be written only when the socket's queue is long. Never rejects. */
  private write(frames: readonly SseFrame[]): Promise<void> {
    if (frames.length === 0 || this.socket.readyState !== WebSocket.OPEN) return Promise.resolve();
    if (!this.corked) {
      // A tick's events in one write, as the SSE writer sends them (docs/architecture/edge.md#node-versions).
      this.corked = true;
      this.connection.cork();
      process.nextTick(() => {
        this.corked = false;
        this.connection.uncork();
      });
    }
    const last = frames.length - 1;
    for (let index = 0; index < last; index += 1) this.socket.send(dataOf(frames[index] as SseFrame));
    const lastData = dataOf(frames[last] as SseFrame);
    if (this.socket.bufferedAmount < HIGH_WATER_BYTES) {
      this.socket.send(lastData);
      return Promise.resolve();
    }
    return new Promise((resolve) => this.socket.send(lastData, () => resolve()));
  }
}

/** A frame's data as its text message. */
function dataOf(frame: SseFrame): string {
  return typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
}

/**
 * A streamed answer into a WebSocket (`streamInto` a `SocketFrameSink`): the same loop as `sse`,
 * cut with the dialect's failure frames when a shutdown's grace time is over.
 */
export function socketStream(encoder: StreamEncoder, sink: SocketFrameSink): Delivery<void> {
  return {
    reportsUsage: encoder.needsUsage,
    async deliver(run, context) {
      const unregister = context.lifecycle.trackStream(sink);
      try {
        await streamInto(sink, run, encoder, { opening: encoder.open(), logger: context.logger });
      } finally {
        unregister();
      }
    },
  };
}
