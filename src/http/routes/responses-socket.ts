import { WebSocketServer } from "ws";
import { ResponseStreamEncoder } from "../../dialects/responses/response-stream-encoder.js";
import type { ResponseRequest } from "../../dialects/responses/response-request.js";
import { InvalidRequestError, MethodNotAllowedError, RateLimitError } from "../../errors/adapter-error.js";
import { type AnswerCall, answerInOrder, type AnswerSteps } from "../answer-request.js";
import type { Lifecycle } from "../lifecycle.js";
import type { RequestContexts } from "../request-contexts.js";
import { type ConnectionHost, ResponsesConnection, type SocketCall } from "../responses/response-connection.js";
import type { Continuation } from "../responses/response-continuation.js";
import { rememberTurn } from "../responses/response-delivery.js";
import { entryOf, type ResponseTurns } from "../responses/response-turns.js";
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
  // Open sockets per principal on this replica (`WEBSOCKET_MAX_PER_KEY`); an entry leaves with its last socket.
  const perPrincipal = new Map<string, number>();
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
    const { principal } = options.authenticate(request);
    const open = perPrincipal.get(principal) ?? 0;
    if (open >= config.answers.webSocket.perPrincipal) {
      throw new RateLimitError(`Too many open WebSocket connections for this key on this server (${open}; WEBSOCKET_MAX_PER_KEY): close one, or send several responses on one connection`, {
        code: "too_many_connections",
      });
    }
    // Counted from before the handshake, so that concurrent upgrades cannot pass the bound together.
    perPrincipal.set(principal, open + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (perPrincipal.get(principal) ?? 1) - 1;
      if (left > 0) perPrincipal.set(principal, left);
      else perPrincipal.delete(principal);
    };
    // Its log line is the connection's: the upgrade, ended whole when the socket closes (request-contexts.ts).
    response.statusCode = 101;
    const socket = request.socket;
    socket.once("close", release);
    // A socket already gone (its client left while the request was read) may have said so before this listened.
    if (socket.destroyed) release();
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
