import type { ServerResponse } from "node:http";
import type { AdapterError } from "../errors/adapter-error.js";
import { errorBody } from "./error-response.js";

/**
 * Writes a server-sent event stream the way OpenAI clients read it: only `data: <json>` frames
 * (no `event:` lines, which older SDKs mishandle), `data: [DONE]` at the end, a `: keep-alive`
 * comment whenever nothing was written for `keepAliveMs`, and `write()` backpressure respected.
 */
export class SseWriter {
  private keepAlive: NodeJS.Timeout | undefined;
  private closed = false;
  private corked = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly keepAliveMs: number,
  ) {
    response.once("close", () => this.stop());
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
    this.keepAlive = setTimeout(() => this.beat(), this.keepAliveMs);
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

  private async write(frame: string): Promise<void> {
    if (this.isClosed) return;
    this.keepAlive?.refresh();
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

  private beat(): void {
    if (this.isClosed) return;
    // A comment line: every SSE parser skips it; proxies see traffic and keep the stream open.
    this.response.write(": keep-alive\n\n");
    this.keepAlive?.refresh();
  }

  private stop(): void {
    this.closed = true;
    if (this.keepAlive) clearTimeout(this.keepAlive);
  }
}
