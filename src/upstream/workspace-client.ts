import { setTimeout as sleep } from "node:timers/promises";
import { Agent, type Dispatcher, errors as undiciErrors } from "undici";
import type { z } from "zod";
import {
  type AdapterError,
  AuthenticationError,
  GatewayTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RequestValidationError,
  UpstreamError,
  type ValidationIssue,
} from "../errors/adapter-error.js";
import { traceAttempt } from "../telemetry/http-spans.js";
import type { Tracing } from "../telemetry/tracing.js";
import type { PageLink } from "./follow-pages.js";
import { getRetryPolicy } from "./get-retry-policy.js";
import {
  type UpstreamPage,
  type UpstreamQuery,
  upstreamErrorSchema,
  upstreamPageSchema,
  upstreamQuerySchema,
} from "./query-schemas.js";

/** Who a call is made for: the credential to present and the workspace to select (docs/architecture.md#authentication-and-workspaces). */
export interface Caller {
  credential: string;
  workspace: string;
  /** `credentialHash(credential)` when the caller has it already, so a request hashes its credential once. */
  credentialKey?: string | undefined;
}

/** A caller for calls that select no workspace (`GET /workspaces`). */
type CallerWithoutWorkspace = { credential: string; workspace: null };

/** One page of `GET /queries`, with the items that could be read (unreadable items are skipped). */
export interface QueryPage {
  items: UpstreamQuery[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** One request to the upstream: `path` without the query string, which travels apart in `search`. */
interface Outgoing {
  method: "GET" | "POST";
  path: string;
  search?: URLSearchParams | undefined;
  headers: Record<string, string>;
  body: string | null;
}

/** A call as errors, metrics and span names name it: `GET /queries`, never the query string. */
function endpointOf({ method, path }: Pick<Outgoing, "method" | "path">): string {
  return `${method} ${path}`;
}

/** The path and query string of a request. */
function pathWithSearch({ path, search }: Pick<Outgoing, "path" | "search">): string {
  return search ? `${path}?${search}` : path;
}

/** One JSON call to the upstream, with everything named. */
interface Call<T extends z.ZodType> {
  method: "GET" | "POST";
  path: string;
  search?: URLSearchParams;
  caller: Caller | CallerWithoutWorkspace | null;
  /** Reads the 2xx body; anything else is a 502 naming the call. */
  schema: T;
  /** Sent as JSON when given. */
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/** An upstream answer, read whole. */
interface Exchange {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One page of `GET /workspaces`: the ids that could be read (record fields are not shown in the interface). */
export interface WorkspacePage {
  ids: string[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** The calls the adapter makes to the Workspace Knowledge Service (docs/architecture.md#queries, Queries area). */
export interface WorkspaceClient {
  readonly baseUrl: string;
  /** `POST /queries`; made within a span (an answer's: `Tracing.withParentSpan`), a client span of its own and its `traceparent` sent along. */
  createQuery(caller: Caller, body: Record<string, unknown>, signal?: AbortSignal): Promise<UpstreamQuery>;
  /** One page of `GET /queries`; traced as `createQuery` is (within an answer's span, or a poll's). */
  listQueries(caller: Caller, page: { limit: number; cursor?: string }, signal?: AbortSignal): Promise<QueryPage>;
  /** `GET /workspaces` (docs/architecture.md#queries): one page of the workspaces the credential can list. */
  listWorkspaces(credential: string, page: { limit: number; cursor?: string }, signal?: AbortSignal): Promise<WorkspacePage>;
  /** `GET /health`: whether the upstream answers at all (no credential, docs/architecture.md#authentication-and-workspaces). */
  checkHealth(signal?: AbortSignal): Promise<boolean>;
  close(): Promise<void>;
}

/** Settings of the upstream HTTP client. */
export interface WorkspaceClientOptions {
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
  /** Traces the calls made within a span (docs/observability.md: `Tracing.withParentSpan`); without it, or outside any span, nothing is traced. */
  tracing?: Tracing | undefined;
}

/**
 * An undici keep-alive client for the upstream (a pooled Agent: much cheaper per call than
 * global fetch, docs/benchmarks.md). It never follows redirects, bounds time and size, and turns every
 * failure into the adapter's error hierarchy (docs/upstream-assumptions.md#upstream-errors).
 */
export function createWorkspaceClient(options: WorkspaceClientOptions): WorkspaceClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
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
  const target = new URL(`${baseUrl}/`);
  const pathPrefix = target.pathname.replace(/\/+$/, "");

  /**
   * One HTTP exchange, the whole body read within `maxResponseBytes`, tried again as the
   * retry policy says (get-retry-policy.ts: reads only, within the caller's signal). Made within a
   * span (the adapter's context: `Tracing.parentSpan`), each attempt is a client span whose context
   * the upstream receives as `traceparent`.
   */
  async function send(outgoing: Outgoing, signal: AbortSignal | undefined): Promise<Exchange> {
    const { tracing } = options;
    const started = performance.now();
    const endpoint = endpointOf(outgoing);
    const report = (outcome: string) => options.onCall?.({ endpoint, outcome, seconds: (performance.now() - started) / 1000 });
    const retries = retry.retriesMethod(outgoing.method) ? retry.retries : 0;
    try {
      for (let attempt = 0; ; attempt += 1) {
        const retriesLeft = attempt < retries;
        let response: Exchange;
        const traced = traceAttempt(tracing, outgoing.method, () => new URL(`${pathPrefix}${pathWithSearch(outgoing)}`, target), attempt);
        try {
          const sent = traced.headers ? { ...outgoing, headers: { ...outgoing.headers, ...traced.headers } } : outgoing;
          response = await exchange(sent, signal);
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

  /** One JSON call: credential and workspace headers, the exchange, the status mapped, the body parsed. */
  async function call<T extends z.ZodType>(request: Call<T>): Promise<z.infer<T>> {
    const { method, path, search, caller, schema, body, signal } = request;
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": "workspace-openai-adapter",
    };
    if (caller) {
      headers.authorization = `Bearer ${caller.credential}`;
      if (caller.workspace !== null) headers["service-workspace"] = caller.workspace;
    }
    if (body !== undefined) headers["content-type"] = "application/json";
    const what = endpointOf({ method, path });
    let response: Exchange;
    try {
      const sent = body === undefined ? null : JSON.stringify(body);
      response = await send({ method, path, search, headers, body: sent }, signal);
    } catch (error) {
      throw error instanceof UpstreamError ? error : transportError(error, what, signal);
    }
    const text = response.text;
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw statusError(response.statusCode, text, response.headers, what);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UpstreamError(`The workspace service sent a body that is not JSON for ${what}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new UpstreamError(
        `The workspace service sent an unexpected body for ${what}: ${parsed.error.issues[0]?.path.join(".") ?? ""} ${parsed.error.issues[0]?.message ?? ""}`.trim(),
      );
    }
    return parsed.data;
  }

  return {
    baseUrl,
    createQuery: (caller, body, signal) => call({ method: "POST", path: "/queries", caller, schema: upstreamQuerySchema, body, signal }),
    async listQueries(caller, page, signal) {
      const search = pageSearch(page);
      const result = await call({ method: "GET", path: "/queries", search, caller, schema: upstreamPageSchema, signal });
      return readPage(result, readQuery);
    },
    async listWorkspaces(credential, page, signal) {
      const caller = { credential, workspace: null };
      const search = pageSearch(page);
      const result = await call({ method: "GET", path: "/workspaces", search, caller, schema: upstreamPageSchema, signal });
      const { items, ...link } = readPage(result, readWorkspaceId);
      return { ids: items, ...link };
    },
    async checkHealth(signal) {
      try {
        const response = await send({ method: "GET", path: "/health", headers: { accept: "application/json" }, body: null }, signal);
        return response.statusCode >= 200 && response.statusCode < 300;
      } catch {
        return false;
      }
    },
    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/** The query string of a page request (docs/architecture.md#listing-and-pagination). */
function pageSearch(page: { limit: number; cursor?: string }): URLSearchParams {
  const search = new URLSearchParams({ limit: String(page.limit) });
  if (page.cursor !== undefined) search.set("cursor", page.cursor);
  return search;
}

/** A list page's items read one by one (an unreadable item is skipped, not fatal) and its link to the next page. */
function readPage<T>(result: UpstreamPage, read: (item: unknown) => T | undefined): { items: T[] } & PageLink {
  const items: T[] = [];
  for (const item of result.data) {
    const value = read(item);
    if (value !== undefined) items.push(value);
  }
  return { items, nextCursor: result.next_cursor ?? null, hasMore: result.has_more ?? Boolean(result.next_cursor) };
}

/** A query record of `GET /queries`, when it can be read. */
function readQuery(item: unknown): UpstreamQuery | undefined {
  const parsed = upstreamQuerySchema.safeParse(item);
  return parsed.success ? parsed.data : undefined;
}

/** A workspace record's id (record fields are not shown in the interface: `id`, `workspace_id` or `slug`). */
function readWorkspaceId(item: unknown): string | undefined {
  const record = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
  const id = [record.id, record.workspace_id, record.slug].find((value) => typeof value === "string" && value !== "");
  return typeof id === "string" ? id : undefined;
}

/** Maps a non-2xx upstream answer (docs/upstream-assumptions.md#upstream-errors). */
export function statusError(
  status: number,
  text: string,
  headers: Record<string, string | string[] | undefined>,
  what: string,
): AdapterError {
  let detail: string | ValidationIssue[] | undefined;
  try {
    const parsed = upstreamErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success) detail = parsed.data.detail as string | ValidationIssue[];
  } catch {
    // Not JSON: the status alone speaks.
  }
  const message = typeof detail === "string" ? detail : `The workspace service answered ${status} to ${what}`;
  const retryAfter = headers["retry-after"];
  switch (status) {
    case 401:
      return new AuthenticationError(message);
    case 403:
      return new PermissionDeniedError(message);
    case 404:
      return new NotFoundError(message);
    case 422:
      return Array.isArray(detail)
        ? new RequestValidationError(detail)
        : new RequestValidationError([{ loc: ["body"], msg: message, type: "value_error" }]);
    case 429:
      return new RateLimitError(message, {
        headers: typeof retryAfter === "string" ? { "retry-after": retryAfter } : {},
      });
    case 408:
    case 504:
      return new GatewayTimeoutError(`The workspace service timed out (${status}) on ${what}`, {
        retryable: true,
      });
    default:
      return new UpstreamError(`The workspace service answered ${status} to ${what}`, {
        retryable: status >= 500,
      });
  }
}

/** Maps a failed exchange: the caller's abort as its reason, a timeout to 504, anything else to 502 with its code. */
function transportError(error: unknown, what: string, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new GatewayTimeoutError(`The workspace service did not answer ${what} in time`, {
      retryable: true,
    });
  }
  const code = (error as { code?: string } | null)?.code;
  return new UpstreamError(`Could not reach the workspace service for ${what}${code ? ` (${code})` : ""}`, {
    cause: error,
  });
}
