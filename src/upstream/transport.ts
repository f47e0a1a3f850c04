import { channel } from "node:diagnostics_channel";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, type Dispatcher } from "undici";
import { UpstreamError } from "../errors/adapter-error.js";
import { CallTarget } from "../telemetry/call-target.js";
import { traceAttempt } from "../telemetry/http-spans.js";
import { NOOP_TRACING, type Tracing } from "../telemetry/tracing.js";
import { getRetryPolicy } from "./get-retry-policy.js";
import { redactUrl } from "../util/redact-url.js";

/** One request to the upstream: `path` without the query string, which travels apart in `search`. */
export interface Outgoing {
  method: "GET" | "POST";
  path: string;
  search?: URLSearchParams | undefined;
  headers: Record<string, string>;
  body: string | null;
}

/** An upstream answer, read whole. */
export interface Exchange {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Settings of the upstream transport (the workspace client's, docs/configuration.md). */
export interface TransportOptions {
  baseUrl: string;
  /** Bound on waiting for headers and on each gap while reading a body. */
  timeoutMs: number;
  /** Bound on opening a connection (default: the smaller of `timeoutMs` and 5 s). */
  connectTimeoutMs?: number;
  /** Retries of a GET on connection errors and 502/503/504 (default 2; see get-retry-policy.ts). */
  getRetries?: number;
  /** Largest upstream body read; a larger one is a 502 (a list of 100 long answers fits easily). */
  maxResponseBytes?: number;
  /** Connections kept per upstream origin. */
  connections?: number;
  /** How long an idle pooled connection is kept open. */
  keepAliveMs?: number;
  dispatcher?: Dispatcher;
  /** Told of every exchange (after retries): for metrics. */
  onCall?: (event: { endpoint: string; outcome: string; seconds: number }) => void;
  /** Traces the calls made within a span (docs/observability.md: `Tracing.withSpan`); without it, or outside any span, nothing is traced. */
  tracing?: Tracing | undefined;
}

/** HTTP to the upstream, whatever the call: bounded, retried as the policy says, traced, reported. */
export interface Transport {
  /** One exchange, tried again as the retry policy says; rejects with what undici or the bounds raised. */
  send(outgoing: Outgoing, signal: AbortSignal | undefined): Promise<Exchange>;
  close(): Promise<void>;
}

/** A call as errors, metrics and span names name it: `GET /queries`, never the query string. */
export function endpointOf({ method, path }: Pick<Outgoing, "method" | "path">): string {
  return `${method} ${path}`;
}

/** The path and query string of a request. */
function pathWithSearch({ path, search }: Pick<Outgoing, "path" | "search">): string {
  return search ? `${path}?${search}` : path;
}

/**
 * Undici's channel of every request it creates. An HTTP client instrumentation subscribes to it
 * (OpenTelemetry's undici instrumentation, a platform's): it starts a span of its own for the
 * request, under the active one, and adds the propagators' headers of that span itself.
 */
const undiciRequests = channel("undici:request:create");

/**
 * An undici keep-alive transport for the upstream (a pooled Agent: much cheaper per call than
 * global fetch, docs/benchmarks.md). It never follows redirects and bounds time and size. Each
 * exchange reads the whole body within `maxResponseBytes`, and is tried again as the retry policy
 * says (get-retry-policy.ts: reads only, within the caller's signal). Made within a span (the
 * active one: `Tracing.activeSpan`), each attempt is a client span whose context the upstream
 * receives in the propagators' headers (`traceparent`…).
 */
export function createTransport(options: TransportOptions): Transport {
  const maxResponseBytes = options.maxResponseBytes ?? 32 * 1024 * 1024;
  const ownsDispatcher = !options.dispatcher;
  const dispatcher =
    options.dispatcher ??
    new Agent({
      connections: options.connections ?? 128,
      keepAliveTimeout: options.keepAliveMs ?? 30_000,
      keepAliveMaxTimeout: options.keepAliveMs ?? 30_000,
      connect: { timeout: options.connectTimeoutMs ?? Math.min(options.timeoutMs, 5000) },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  const retry = getRetryPolicy(options.getRetries ?? 2);
  const target = new URL(`${options.baseUrl.replace(/\/+$/, "")}/`);
  const pathPrefix = target.pathname.replace(/\/+$/, "");
  // Spans record each call's URL (`url.full`): never with the credentials the base URL may carry.
  const callTarget = new CallTarget(new URL(redactUrl(target.href)));

  async function send(outgoing: Outgoing, signal: AbortSignal | undefined): Promise<Exchange> {
    const tracing = options.tracing ?? NOOP_TRACING;
    const started = performance.now();
    const endpoint = endpointOf(outgoing);
    const report = (outcome: string) => options.onCall?.({ endpoint, outcome, seconds: (performance.now() - started) / 1000 });
    const retries = retry.retriesMethod(outgoing.method) ? retry.retries : 0;
    try {
      for (let attempt = 0; ; attempt += 1) {
        const retriesLeft = attempt < retries;
        let response: Exchange;
        const traced = traceAttempt(tracing, outgoing.method, callTarget, () => `${pathPrefix}${pathWithSearch(outgoing)}`, attempt);
        try {
          // An instrumented client sends its own span's context, a child of this attempt's: a second
          // `traceparent` would make the upstream drop both (opentelemetry-js-contrib#2796).
          const headers = undiciRequests.hasSubscribers ? undefined : traced.headers;
          const sent = headers ? { ...outgoing, headers: { ...outgoing.headers, ...headers } } : outgoing;
          response = await traced.run(() => exchange(sent, signal));
        } catch (error) {
          traced.end({ error });
          if (!retriesLeft || signal?.aborted || !retry.retriesError(error)) throw error;
          await sleep(retry.delayMs(attempt), undefined, signal ? { signal } : undefined);
          continue;
        }
        traced.end({ status: response.statusCode });
        if (!retriesLeft || !retry.retriesStatus(response.statusCode)) {
          report(String(response.statusCode));
          return response;
        }
        await sleep(retry.delayMs(attempt), undefined, signal ? { signal } : undefined);
      }
    } catch (error) {
      report(signal?.aborted ? "aborted" : ((error as { code?: string } | null)?.code ?? "error"));
      throw error;
    }
  }

  /**
   * One request through undici's low-level `dispatch` (cheaper per call than its `request()` API
   * on this hot path), reading the body with the size bound as it arrives.
   */
  function exchange(outgoing: Outgoing, signal: AbortSignal | undefined): Promise<Exchange> {
    const { method, headers, body } = outgoing;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let controller: { abort(reason: Error): void } | undefined;
      const onAbort = () => controller?.abort(signal?.reason as Error);
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      const chunks: Buffer[] = [];
      let size = 0;
      let statusCode = 0;
      let responseHeaders: Record<string, string | string[] | undefined> = {};
      const tooLarge = () => new UpstreamError(`The workspace service sent a body larger than ${maxResponseBytes} bytes`);
      dispatcher.dispatch(
        {
          origin: target.origin,
          path: `${pathPrefix}${pathWithSearch(outgoing)}`,
          method,
          headers,
          body,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        },
        {
          onRequestStart(requestController) {
            controller = requestController;
            if (signal?.aborted) requestController.abort(signal.reason as Error);
          },
          onResponseStart(responseController, status, received) {
            statusCode = status;
            responseHeaders = received as Record<string, string | string[] | undefined>;
            if (Number(received["content-length"] ?? 0) > maxResponseBytes) responseController.abort(tooLarge());
          },
          onResponseData(responseController, chunk) {
            size += chunk.length;
            if (size > maxResponseBytes) responseController.abort(tooLarge());
            else chunks.push(chunk);
          },
          onResponseEnd() {
            done();
            const text = chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8");
            resolve({ statusCode, headers: responseHeaders, text });
          },
          onResponseError(_responseController, error) {
            done();
            reject(error);
          },
        },
      );
    });
  }

  return {
    send,
    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}
