import type { ServerResponse } from "node:http";
import { ServiceUnavailableError } from "../errors/adapter-error.js";
import { sendError } from "./error-response.js";
import type { RequestContext } from "./request-context.js";

/** A stream that can be ended from outside (the SSE writer), for shutdown. */
export interface EndableStream {
  fail(error: ServiceUnavailableError): Promise<void>;
}

/**
 * The adapter's running state, for graceful shutdown: whether it is draining, how many requests
 * are in flight, and which streams are open. Refuses new requests while draining (503 with
 * `Connection: close`), and ends open streams with an error frame when the grace time is over.
 */
export class Lifecycle {
  private draining = false;
  private inFlight = 0;
  private readonly streams = new Set<EndableStream>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly drainHooks = new Set<() => void>();

  /** Whether shutdown has begun (readiness is 503 from then on). */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Requests in flight, streams included. */
  get activeRequests(): number {
    return this.inFlight;
  }

  /**
   * Counts a request in flight until its response closes; while draining, refuses it instead
   * (503 with `Connection: close`) and returns false. Liveness and readiness are still answered
   * while draining (readiness says 503 itself), so that the probes see the adapter draining.
   */
  accepting(path: string, response: ServerResponse, context: RequestContext): boolean {
    if (this.draining) response.setHeader("connection", "close");
    if (this.draining && path !== "/health" && path !== "/ready") {
      sendError(
        response,
        new ServiceUnavailableError("The adapter is shutting down; retry on another instance", { headers: { "retry-after": "1" } }),
      );
      return false;
    }
    this.inFlight += 1;
    context.whenClosed(() => {
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    });
    return true;
  }

  /** Streams open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Registers an open stream; call the returned function when it ends. */
  trackStream(stream: EndableStream): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  /**
   * Runs `hook` once draining begins (at once if it has): what holds connections open between its
   * requests (a Responses WebSocket) closes them then, or after the answer it runs. Call the
   * returned function when it no longer needs telling.
   */
  whenDraining(hook: () => void): () => void {
    if (this.draining) {
      hook();
      return () => undefined;
    }
    this.drainHooks.add(hook);
    return () => this.drainHooks.delete(hook);
  }

  /** Starts draining and resolves when nothing is in flight, or after `graceMs`, whichever is first. */
  async drain(graceMs: number): Promise<{ finished: boolean }> {
    if (!this.draining) {
      this.draining = true;
      for (const hook of this.drainHooks) hook();
      this.drainHooks.clear();
    }
    if (this.inFlight === 0) return { finished: true };
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true))),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    return { finished };
  }

  /** Ends every open stream with an error frame and `[DONE]`. */
  async endStreams(): Promise<void> {
    const error = new ServiceUnavailableError("The adapter is shutting down; the answer was cut short");
    await Promise.allSettled([...this.streams].map((stream) => stream.fail(error)));
    this.streams.clear();
  }
}
