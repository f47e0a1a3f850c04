import type { IncomingMessage } from "node:http";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { owned } from "../../continuity/access.js";
import { ResponseStreamEncoder } from "../../dialects/responses/response-stream-encoder.js";
import type { ResponseRequest } from "../../dialects/responses/response-request.js";
import { errorBody } from "../../errors/error-body.js";
import { type AdapterError, ClientClosedError, InvalidRequestError, MethodNotAllowedError, RateLimitError, ServiceUnavailableError, toAdapterError } from "../../errors/adapter-error.js";
import { type AnswerCall, answerInOrder, type AnswerSteps } from "../answer-request.js";
import { SocketFrameSink, socketStream } from "../delivery/socket-delivery.js";
import type { Lifecycle } from "../lifecycle.js";
import type { RequestContexts } from "../request-context.js";
import type { ResponseLookup } from "../responses/response-lookups.js";
import { rememberTurn } from "../responses/response-delivery.js";
import { entryOf, type ResponseTurns, type StoredResponse } from "../responses/response-turns.js";
import type { Continuation } from "../responses/response-continuation.js";
import type { RouteCall } from "../route-table.js";
import type { ResponseAsked, ResponseReading, ResponsesRouteOptions, ResponseTransport } from "./responses.js";

/** What WebSocket mode is built from: the Responses routes' options, their turns, and the adapter's request contexts and lifecycle. */
export interface ResponsesSocketOptions extends ResponsesRouteOptions {
  turns: ResponseTurns;
  contexts: RequestContexts;
  lifecycle: Lifecycle;
}

/** The Responses create steps for a transport (`responseCreateSteps`), passed in so that this module does not import its route's. */
export type ResponseStepsOf = <Call extends AnswerCall>(
  options: ResponsesRouteOptions,
  transport: ResponseTransport<Call>,
) => AnswerSteps<ResponseRequest, ResponseReading, ResponseAsked, Continuation, Call>;

/** A `response.create` message as the order of checks reads it: its upgrade request's headers, the message, its connection. */
interface SocketCall extends AnswerCall {
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
const NOTHING = Buffer.alloc(0);
/** A `Sec-WebSocket-Key`: 16 bytes in base64 (RFC 6455 §4.2.1). */
const SOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * WebSocket mode of the Responses API (docs/responses-api.md#websocket-mode), on `GET
 * /v1/responses` upgraded: the same edge (guard, lifecycle, the route table) and authentication as
 * HTTP before the upgrade, then each `response.create` message answered through the same order of
 * checks (`answerInOrder`) on a context of its own, streamed as the SSE path's events, one answer at
 * a time per connection. The connection keeps its latest `store: false` response, so that it can be
 * continued on that socket only; everything else is looked up in the adapter's stores, so a
 * continuation works on any replica. One sweep pings every socket and ends those past their life.
 */
export function responsesSocket(options: ResponsesSocketOptions, stepsOf: ResponseStepsOf) {
  const { config, logger } = options;
  const seconds = () => Math.floor(options.clock.now() / 1000);
  // Messages bounded as a request body is; no compression (its memory per socket, and its bombs).
  const maxPayload = config.limits.bodyLimitBytes;
  const server = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false, clientTracking: false });
  const connections = new Set<ResponsesConnection>();
  let sweep: NodeJS.Timeout | undefined;

  const transport: ResponseTransport<SocketCall> = {
    local: (_body, meta, call) => call.connection.stream(new ResponseStreamEncoder(meta, seconds, options.documentLinks)),
    deliver: (planned, call) => {
      const { turn, thread } = planned;
      const encoder = new ResponseStreamEncoder(turn.meta, seconds, options.documentLinks);
      const remembered = rememberTurn(options, turn, thread, encoder);
      const remember = async (sent: Parameters<typeof remembered>[0]) => {
        await remembered(sent);
        // Kept on this connection only, never written anywhere (docs/responses-api.md#websocket-mode).
        if (!turn.meta.store) call.connection.keep(entryOf(turn, encoder));
      };
      return { delivery: call.connection.stream(encoder), remember };
    },
    stores: (call) => ({ ...options, stored: call.connection.lookup(options.stored) }),
  };
  // No header names what `LENIENT_PARAMETERS=on` ignores after an upgrade: on a socket it is refused, never dropped unsaid.
  const strict = { ...options, parameters: { ...options.parameters, lenient: false } };
  const create = answerInOrder(stepsOf(strict, transport), options);

  const host: ConnectionHost = {
    answer: (call) => create(call),
    contexts: options.contexts,
    logger,
    closed: (connection) => {
      connections.delete(connection);
      if (connections.size === 0 && sweep) {
        clearInterval(sweep);
        sweep = undefined;
      }
    },
  };
  const { pingMs, maxMs } = config.answers.webSocket;
  const sweepAll = () => {
    const now = options.clock.now();
    for (const connection of connections) connection.sweep(now, maxMs);
  };
  // Shutdown: idle sockets close at once, the others once their answer ends (or is cut at the grace time).
  options.lifecycle.whenDraining(() => {
    for (const connection of connections) connection.shutdown();
  });

  /** `GET /v1/responses`: upgraded to a WebSocket when it asks to be, authenticated first; otherwise the 405 it always was. */
  const upgrade = async ({ request, response }: RouteCall): Promise<void> => {
    if (!options.upgrading(request) || request.headers.upgrade?.toLowerCase() !== "websocket") {
      throw new MethodNotAllowedError("GET", "/v1/responses", ["POST"]);
    }
    const key = request.headers["sec-websocket-key"];
    const version = request.headers["sec-websocket-version"];
    if (typeof key !== "string" || !SOCKET_KEY.test(key) || (version !== "13" && version !== "8")) {
      throw new InvalidRequestError("Not a WebSocket handshake: Sec-WebSocket-Key and Sec-WebSocket-Version 13 are required", { code: "invalid_handshake" });
    }
    // A refused credential is the HTTP 401 the POST route answers, before the upgrade.
    options.authenticate(request);
    // Its log line is the connection's: the upgrade, ended whole when the socket closes (request-context.ts).
    response.statusCode = 101;
    const socket = request.socket;
    await new Promise<void>((resolve) => {
      socket.once("close", resolve);
      server.handleUpgrade(request, socket, NOTHING, (ws) => {
        socket.off("close", resolve);
        const connection = new ResponsesConnection(ws, request, host, options.clock.now());
        connections.add(connection);
        sweep ??= setInterval(sweepAll, pingMs).unref();
        resolve();
      });
    });
  };

  return { upgrade, openConnections: () => connections.size };
}

/** What a connection needs of the socket server that made it. */
interface ConnectionHost {
  answer(call: SocketCall): Promise<void>;
  contexts: RequestContexts;
  logger: ResponsesSocketOptions["logger"];
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
class ResponsesConnection {
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

/** `GET /v1/responses` in the OpenAPI document: the WebSocket upgrade. */
export const responsesSocketOperation = {
  summary: "WebSocket mode of the Responses API: upgrade, then send `response.create` events (docs/responses-api.md#websocket-mode)",
  security: [{ bearer: [] }],
  responses: {
    "101": { description: "Switching protocols: the socket carries `response.create` events and the streamed events of each response" },
    "401": { description: "No bearer credential, or one that is refused (`{detail}` and an OpenAI `error`)" },
    "405": { description: "A GET that does not ask for a WebSocket upgrade" },
  },
};
