import type { IncomingMessage } from "node:http";
import type { Logger } from "pino";
import { type RawData, WebSocket } from "ws";
import { owned } from "../../continuity/access.js";
import type { ResponseStreamEncoder } from "../../dialects/responses/response-stream-encoder.js";
import { errorBody } from "../../errors/error-body.js";
import { type AdapterError, ClientClosedError, InvalidRequestError, RateLimitError, ServiceUnavailableError, toAdapterError } from "../../errors/adapter-error.js";
import type { AnswerCall } from "../answer-request.js";
import { SocketFrameSink, socketStream } from "../delivery/socket-delivery.js";
import type { RequestContexts } from "../request-contexts.js";
import type { ResponseLookup } from "./response-lookups.js";
import type { StoredResponse } from "./response-turns.js";

// One connection of the Responses API's WebSocket mode (docs/responses-api.md#websocket-mode); the
// upgrade and the socket server that makes connections are `routes/responses-socket.ts`.

/** A `response.create` message as the order of checks reads it: its upgrade request's headers, the message, its connection. */
export interface SocketCall extends AnswerCall {
  readonly connection: ResponsesConnection;
}

/** What a message's answer reports of itself in the log line, metrics and audit trail: a fixed route label. */
const MESSAGE_ROUTE = "/v1/responses (websocket)";
/** `response.create` messages a connection holds while one runs (the spec lets a server queue them; it answers them in order). */
const MAX_PENDING = 8;
/** How long a closing handshake may take before the socket is cut. */
const CLOSE_WAIT_MS = 2000;
/** A WebSocket's close codes (RFC 6455 §7.4.1). */
const NORMAL = 1000;
const GOING_AWAY = 1001;
/** No header follows a WebSocket's upgrade: the edge's headers of a message's answer have nowhere to go. */
const NO_HEADERS = { setHeader: () => NO_HEADERS } as unknown as AnswerCall["response"];
/** What a connection needs of the socket server that made it. */
export interface ConnectionHost {
  answer(call: SocketCall): Promise<void>;
  contexts: RequestContexts;
  logger: Logger;
  closed(connection: ResponsesConnection): void;
}

/** The message being answered: its context's end, and its stream once it began. */
interface Running {
  end(status: number, completed: boolean): void;
  sink: SocketFrameSink | undefined;
}

/**
 * One WebSocket of the Responses API: its `response.create` messages answered in order, one at a
 * time (a few more held while one runs), each on a context of its own; the latest `store: false`
 * response it made, to continue on it; pings, its life's limit, shutdown. Its memory is what an
 * idle socket costs (bench/websocket.mjs measures it).
 */
export class ResponsesConnection {
  private readonly pending: Record<string, unknown>[] = [];
  private running: Running | undefined;
  /** The latest `store: false` response made here: only this socket can continue it. */
  private kept: StoredResponse | null = null;
  private answeredPing = true;
  /** Why it closes once its answer ends: a shutdown or its life's limit. */
  private closing: { code: number; reason: string; error?: AdapterError } | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly request: IncomingMessage,
    private readonly host: ConnectionHost,
    private readonly openedAt: number,
  ) {
    socket.on("message", (data, isBinary) => this.received(data, isBinary));
    socket.on("pong", () => {
      this.answeredPing = true;
    });
    // A socket error is followed by its close, which ends what runs.
    socket.on("error", () => undefined);
    socket.once("close", () => this.left());
  }

  /** The lookup of a continuation on this socket: its kept response first, then the adapter's stores. */
  lookup(stored: ResponseLookup): ResponseLookup {
    return {
      visible: async (id, principal, workspace) => {
        const kept = this.kept;
        if (kept?.id === id && owned(kept, principal, workspace)) return kept;
        return stored.visible(id, principal, workspace);
      },
      producing: async (itemId, principal, workspace) => {
        const kept = this.kept;
        if (kept?.itemIds.includes(itemId) && owned(kept, principal, workspace)) return kept;
        return stored.producing(itemId, principal, workspace);
      },
    };
  }

  /** Keeps the latest `store: false` response (an answer not finished whole is not kept). */
  keep(entry: StoredResponse | null): void {
    if (entry) this.kept = entry;
  }

  /** The delivery of the running message's answer: into this socket. */
  stream(encoder: ResponseStreamEncoder): ReturnType<typeof socketStream> {
    const sink = new SocketFrameSink(this.socket, encoder, this.request.socket);
    if (this.running) this.running.sink = sink;
    return socketStream(encoder, sink);
  }

  /** The sweep's visit: a ping (a socket that did not answer the last one is cut), and the end of its life. */
  sweep(now: number, maxMs: number): void {
    if (!this.answeredPing) {
      this.socket.terminate();
      return;
    }
    this.answeredPing = false;
    this.socket.ping();
    if (now - this.openedAt >= maxMs && !this.closing) {
      const error = new InvalidRequestError(`This WebSocket reached its limit of ${Math.round(maxMs / 60_000)} minutes: open a new one`, {
        code: "websocket_connection_limit_reached",
      });
      this.closeAfterAnswer({ code: NORMAL, reason: "connection limit reached", error });
    }
  }

  /** The adapter drains: no new answer; closed at once when idle, else once its answer ends. */
  shutdown(): void {
    if (this.closing) return;
    this.closeAfterAnswer({ code: GOING_AWAY, reason: "the adapter is shutting down" });
  }

  private closeAfterAnswer(closing: NonNullable<ResponsesConnection["closing"]>): void {
    this.closing = closing;
    const refused = new ServiceUnavailableError("The connection is closing; open a new one", { code: "connection_closing" });
    for (const _message of this.pending.splice(0)) this.sendError(refused);
    if (!this.running) this.close();
  }

  private close(): void {
    const closing = this.closing;
    if (!closing || this.socket.readyState !== WebSocket.OPEN) return;
    if (closing.error) this.sendError(closing.error);
    this.socket.close(closing.code, closing.reason);
    setTimeout(() => this.socket.terminate(), CLOSE_WAIT_MS).unref();
  }

  /** A message: a `response.create` is held and answered in turn; anything else is an `error` event, and the socket stays open. */
  private received(data: RawData, isBinary: boolean): void {
    const refused = this.refusal(data, isBinary);
    if (refused instanceof Error) {
      this.sendError(refused);
      return;
    }
    this.pending.push(refused);
    void this.next();
  }

  /** The message's `response.create` body, or why it is refused. */
  private refusal(data: RawData, isBinary: boolean): Record<string, unknown> | AdapterError {
    if (this.closing) return new ServiceUnavailableError("The connection is closing; open a new one", { code: "connection_closing" });
    if (isBinary) return new InvalidRequestError("Send each event as a JSON text message", { code: "invalid_message" });
    let message: unknown;
    try {
      message = JSON.parse(Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(data as Buffer[]).toString("utf8"));
    } catch {
      return new InvalidRequestError("The message is not valid JSON", { code: "invalid_json" });
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return new InvalidRequestError("An event is a JSON object with a `type`", { code: "invalid_message", param: "type" });
    }
    const { type } = message as { type?: unknown };
    if (type !== "response.create") {
      const named = typeof type === "string" ? `'${type.slice(0, 64)}'` : "no type";
      return new InvalidRequestError(`Unknown event type (${named}): the only client event is 'response.create'`, { code: "unknown_event_type", param: "type" });
    }
    if (this.pending.length >= MAX_PENDING) {
      return new RateLimitError(`At most ${MAX_PENDING} responses wait on one WebSocket while one runs; wait for a terminal event, or open another connection`, {
        code: "too_many_pending_responses",
      });
    }
    return message as Record<string, unknown>;
  }

  /** Answers the held messages in order, one at a time. */
  private async next(): Promise<void> {
    while (!this.running && this.pending.length > 0 && this.socket.readyState === WebSocket.OPEN) {
      await this.answer(this.pending.shift() as Record<string, unknown>);
    }
  }

  /** One `response.create`: the order of checks on a context of its own; a failure is an `error` event, or the stream's own failure frames. */
  private async answer(message: Record<string, unknown>): Promise<void> {
    // The transport decides how the answer goes: always streamed here, never in the background.
    const { type: _type, stream: _stream, stream_options: _streamOptions, ...body } = message;
    const { context, end } = this.host.contexts.message(this.request, MESSAGE_ROUTE);
    const running: Running = { end, sink: undefined };
    this.running = running;
    let failure: AdapterError | undefined;
    try {
      if (body.background === true) {
        throw new InvalidRequestError("Background mode is not available over a WebSocket: send it as POST /v1/responses", { param: "background", code: "unsupported_parameter" });
      }
      await this.host.answer({ request: this.request, response: NO_HEADERS, context, message: body, connection: this });
      failure = running.sink?.failure;
    } catch (error) {
      failure = toAdapterError(error);
      if (failure.status >= 500) this.host.logger.error({ err: error, requestId: context.id }, "websocket answer failed");
      if (!(failure instanceof ClientClosedError)) this.sendError(failure);
    } finally {
      // A continuation that fails forgets what it continued (the spec: a 4xx or 5xx evicts it).
      const previous = body.previous_response_id;
      if (failure && typeof previous === "string" && this.kept?.id === previous) this.kept = null;
      const open = this.socket.readyState === WebSocket.OPEN;
      end(failure?.status ?? (open ? 200 : 499), !failure && open);
      this.running = undefined;
      if (this.closing) this.close();
    }
  }

  /** An `error` event (the spec's WebSocket error): the HTTP status the same failure has, and its error object. */
  private sendError(failure: AdapterError): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    const { detail, error } = errorBody(failure);
    this.socket.send(JSON.stringify({ type: "error", status: failure.status, error: { ...error, code: error.code ?? error.type }, detail }));
  }

  /** The client left (or the socket was cut): the running answer is aborted as an HTTP client's leaving aborts it. */
  private left(): void {
    this.pending.length = 0;
    this.kept = null;
    this.running?.end(499, false);
    this.host.closed(this);
  }
}
