import type { ServerResponse } from "node:http";
import type { AdapterError } from "../errors/adapter-error.js";
import { errorBody } from "./error-response.js";
import { whenClosed } from "./request-log.js";

/**
 * One timer for the keep-alives of every open stream with the same interval: a stream that wrote
 * nothing for `intervalMs` gets a comment. A timer per stream would be one more object each of
 * thousands of open streams holds.
 */
class KeepAliveSweep {
  private readonly writers = new Set<SseWriter>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly intervalMs: number) {}

  add(writer: SseWriter): void {
    this.writers.add(writer);
    this.timer ??= setInterval(() => this.sweep(), Math.max(5, Math.floor(this.intervalMs / 4))).unref();
  }

  remove(writer: SseWriter): void {
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
  private beat(due: SseWriter[], from: number, now: number): void {
    const end = Math.min(due.length, from + KEEP_ALIVE_BATCH);
    for (let index = from; index < end; index += 1) (due[index] as SseWriter).beat(now);
    if (end < due.length) setImmediate(() => this.beat(due, end, now));
  }
}

const sweeps = new Map<number, KeepAliveSweep>();
const KEEP_ALIVE_BATCH = 200;

/**
 * Writes a server-sent event stream the way OpenAI clients read it: only `data: <json>` frames
 * (no `event:` lines, which older SDKs mishandle), `data: [DONE]` at the end, a `: keep-alive`
 * comment whenever nothing was written for `keepAliveMs`, and `write()` backpressure respected.
 */
export class SseWriter {
  /** When something was last written (performance.now()), for the keep-alive sweep. */
  lastWrite = performance.now();
  private closed = false;
  private corked = false;
  private readonly sweep: KeepAliveSweep;

  constructor(
    private readonly response: ServerResponse,
    keepAliveMs: number,
  ) {
    let sweep = sweeps.get(keepAliveMs);
    if (!sweep) {
      sweep = new KeepAliveSweep(keepAliveMs);
      sweeps.set(keepAliveMs, sweep);
    }
    this.sweep = sweep;
    whenClosed(response, () => this.stop());
  }

  /** Sends the stream's headers at once, so that the client (and any proxy) sees the stream start. */
  open(): void {
    this.response.statusCode = 200;
    this.response.setHeader("content-type", "text/event-stream; charset=utf-8");
    this.response.setHeader("cache-control", "no-cache, no-store");
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

  /** One `data:` frame; resolves when the socket can take more (or the client is gone). */
  async send(data: unknown): Promise<void> {
    await this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends a failed stream: an OpenAI-style error frame, then `[DONE]` (openai-node raises it as an APIError). */
  async fail(error: AdapterError): Promise<void> {
    await this.send({ error: errorBody(error).error });
    await this.end();
  }

  /** `data: [DONE]`, then the end of the response. */
  async end(): Promise<void> {
    await this.write("data: [DONE]\n\n");
    this.stop();
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
      process.nextTick(() => {
        this.corked = false;
        this.response.uncork();
      });
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

  private stop(): void {
    this.closed = true;
    this.sweep.remove(this);
  }
}
