import type { ServerResponse } from "node:http";
import type { FrameSink } from "../answer/frame-sink.js";
import type { SseFrame } from "../core/sse-frame.js";
import type { AdapterError } from "../errors/adapter-error.js";
import type { RequestContext } from "./request-context.js";

/**
 * Something that must show life every so often: an SSE stream (a comment) or an MCP tool call
 * waiting with a progress token (a progress notification).
 */
export interface Beating {
  /** When it last sent something (performance.now()). */
  lastWrite: number;
  /** Sends a sign of life now. */
  beat(now: number): void;
}

/**
 * One timer for the keep-alives of every open stream with the same interval: a stream that wrote
 * nothing for `intervalMs` gets a comment. A timer per stream would be one more object each of
 * thousands of open streams holds. One per interval (see `KeepAliveSweeps`).
 */
export class KeepAliveSweep {
  private readonly writers = new Set<Beating>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly intervalMs: number) {}

  add(writer: Beating): void {
    this.writers.add(writer);
    this.timer ??= setInterval(() => this.sweep(), Math.max(5, Math.floor(this.intervalMs / 4))).unref();
  }

  remove(writer: Beating): void {
    this.writers.delete(writer);
    if (this.writers.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private sweep(): void {
    const now = performance.now();
    const due = [...this.writers].filter((writer) => now - writer.lastWrite >= this.intervalMs);
    this.beat(due, 0, now);
  }

  /** Writes the due keep-alives a batch per tick, so thousands of streams do not stall the event loop at once. */
  private beat(due: Beating[], from: number, now: number): void {
    const end = Math.min(due.length, from + KEEP_ALIVE_BATCH);
    for (let index = from; index < end; index += 1) (due[index] as Beating).beat(now);
    if (end < due.length) setImmediate(() => this.beat(due, end, now));
  }
}

const KEEP_ALIVE_BATCH = 200;

/** One frame as it goes on the wire: an `event:` line when it names one, its `data:` line, a blank line. */
export function formatFrame(frame: SseFrame): string {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return frame.event === undefined ? `data: ${data}\n\n` : `event: ${frame.event}\ndata: ${data}\n\n`;
}

/**
 * The keep-alive sweeps of one adapter, one per interval in use: owned by the adapter that
 * `createAdapter` builds, so two adapters in one process share no timer or stream set.
 */
export class KeepAliveSweeps {
  private readonly sweeps = new Map<number, KeepAliveSweep>();

  /** The sweep for streams that beat every `intervalMs`. */
  of(intervalMs: number): KeepAliveSweep {
    let sweep = this.sweeps.get(intervalMs);
    if (!sweep) {
      sweep = new KeepAliveSweep(intervalMs);
      this.sweeps.set(intervalMs, sweep);
    }
    return sweep;
  }
}

/**
 * Writes a server-sent event stream the way OpenAI clients read it: the frames a dialect encoder
 * gives (`data:` lines, with an `event:` line only when the frame names one), a `: keep-alive`
 * comment whenever nothing was written for the sweep's interval, and `write()` backpressure
 * respected. A stream ended from outside (shutdown) gets the encoder's failure frames. The sink
 * of an answer streamed to its client (`FrameSink`).
 */
export class SseWriter implements Beating, FrameSink {
  /** When something was last written (performance.now()), for the keep-alive sweep. */
  lastWrite = performance.now();
  private closed = false;
  private corked = false;
  private readonly sweep: KeepAliveSweep;
  private readonly response: ServerResponse;
  private readonly context: RequestContext;

  constructor(
    target: { readonly response: ServerResponse; readonly context: RequestContext },
    sweep: KeepAliveSweep,
    /** The frames that end this stream when it fails after it began. */
    private readonly failFrames: (error: AdapterError) => SseFrame[],
  ) {
    this.response = target.response;
    this.context = target.context;
    this.sweep = sweep;
    this.context.whenClosed(() => this.stop());
  }

  /**
   * Sends the stream's headers at once, so that the client (and any proxy) sees the stream start;
   * from here a failure the route did not catch ends the stream with its failure frames (`reportFailure`).
   */
  open(): void {
    this.context.streaming(this);
    this.response.statusCode = 200;
    this.response.setHeader("content-type", "text/event-stream; charset=utf-8");
    // No cache stores a POST's answer (RFC 9110 §9.3.3), and there `no-store` made Chromium end a fetch
    // whose stream the page read to its end as cancelled, though every byte had come
    // (docs/architecture.md#streams-in-a-browser); a GET stream (a stored response replayed) keeps it.
    this.response.setHeader("cache-control", this.response.req?.method === "GET" ? "no-cache, no-store" : "no-cache");
    this.response.setHeader("connection", "keep-alive");
    this.response.setHeader("x-accel-buffering", "no");
    this.response.flushHeaders();
    this.response.socket?.setNoDelay(true);
    this.lastWrite = performance.now();
    this.sweep.add(this);
  }

  /** Whether the client is gone (nothing more can be sent). */
  get isClosed(): boolean {
    return this.closed || this.response.destroyed;
  }

  /** Frames, in order; resolves when the socket can take more (or the client is gone). */
  async send(frames: readonly SseFrame[]): Promise<void> {
    for (const frame of frames) await this.write(formatFrame(frame));
  }

  /** Ends a failed stream with its dialect's failure frames. */
  async fail(error: AdapterError): Promise<void> {
    await this.send(this.failFrames(error));
    this.finish();
  }

  /** Sends the closing frames and ends the response: true when the client got them all. */
  async end(closing: readonly SseFrame[] = []): Promise<boolean> {
    await this.send(closing);
    const delivered = !this.isClosed;
    this.finish();
    return delivered;
  }

  /**
   * The end of the response (its closing frames were sent before). The frames still
   * corked in this tick are released first: since Node 22, `ServerResponse.cork()` gathers
   * chunked writes into one buffer that `end()` flushes only *after* writing the body's terminator
   * (`0\r\n\r\n`), so ending while corked put the closing frames (finish, usage, `[DONE]`) after the
   * end of the body, where clients drop them and reset the connection (Node 20 encoded each write
   * at once, so the order held there). See docs/architecture.md#node-versions.
   */
  private finish(): void {
    this.stop();
    this.releaseCork();
    if (!this.response.destroyed) this.response.end();
  }

  /** A comment line: every SSE parser skips it; proxies see traffic and keep the stream open. */
  beat(now: number): void {
    if (this.isClosed) return;
    this.lastWrite = now;
    this.response.write(": keep-alive\n\n");
  }

  private async write(frame: string): Promise<void> {
    if (this.isClosed) return;
    this.lastWrite = performance.now();
    // Frames written in the same tick (a finished answer's last chunks, [DONE]) leave in one
    // socket write instead of one each.
    if (!this.corked) {
      this.corked = true;
      this.response.cork();
      process.nextTick(this.releaseCork);
    }
    if (this.response.write(frame)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.response.off("drain", done);
        this.response.off("close", done);
        resolve();
      };
      this.response.on("drain", done);
      this.response.on("close", done);
    });
  }

  /**
   * Uncorks once for the one cork `write` took, whichever comes first: the next tick or `end()`.
   * Never more: Node's `uncork()` does not stop at zero, and a negative count would buffer every
   * later write until the end.
   */
  private readonly releaseCork = (): void => {
    if (!this.corked) return;
    this.corked = false;
    this.response.uncork();
  };

  private stop(): void {
    this.closed = true;
    this.sweep.remove(this);
  }
}
