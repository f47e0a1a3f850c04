import { WebSocket } from "ws";
import { API_KEY } from "./start-stack.js";

/** A streamed Responses event as it arrives on a WebSocket. */
export type SocketEvent = { type: string; sequence_number?: number; [key: string]: any };

const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete", "error"]);

/**
 * A client of the Responses API's WebSocket mode for tests (docs/responses-api.md#websocket-mode),
 * on the real `ws` client: it sends `response.create` events and reads the events back in order.
 */
export class ResponseSocket {
  private readonly received: SocketEvent[] = [];
  private readonly waiters: ((event: SocketEvent | null) => void)[] = [];
  /** The close code and reason, once closed. */
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data, isBinary) => {
      const event = JSON.parse(String(data)) as SocketEvent;
      if (isBinary) throw new Error("a binary message");
      const waiter = this.waiters.shift();
      if (waiter) waiter(event);
      else this.received.push(event);
    });
    socket.on("close", (code, reason) => {
      this.closed = { code, reason: String(reason) };
      for (const waiter of this.waiters.splice(0)) waiter(null);
    });
  }

  /** Opens a socket on `GET {base}/v1/responses`, with the test key and workspace unless `headers` say otherwise. */
  static open(base: string, headers: Record<string, string> = {}): Promise<ResponseSocket> {
    const url = `${base.replace(/^http/, "ws")}/v1/responses`;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme", ...headers } });
    return new Promise((resolve, reject) => {
      socket.once("open", () => resolve(new ResponseSocket(socket)));
      socket.once("error", reject);
      socket.once("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode, body: JSON.parse(body || "null") })));
      });
    });
  }

  /** Sends a `response.create` with this body. */
  create(body: Record<string, unknown>): void {
    this.socket.send(JSON.stringify({ type: "response.create", ...body }));
  }

  /** The next event, or null once the socket closed. */
  next(): Promise<SocketEvent | null> {
    const event = this.received.shift();
    if (event) return Promise.resolve(event);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The events up to a terminal one (`response.completed`, `.failed`, `.incomplete`, or `error`), that one included. */
  async untilTerminal(): Promise<SocketEvent[]> {
    const events: SocketEvent[] = [];
    for (;;) {
      const event = await this.next();
      if (!event) throw new Error(`the socket closed after ${events.map((seen) => seen.type).join(", ")}`);
      events.push(event);
      if (TERMINAL.has(event.type)) return events;
    }
  }

  /** One turn: a `response.create`, and its events up to a terminal one. */
  turn(body: Record<string, unknown>): Promise<SocketEvent[]> {
    this.create(body);
    return this.untilTerminal();
  }

  /** Resolves once the socket is closed, with its code and reason. */
  whenClosed(): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve) => this.socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })));
  }

  close(): void {
    this.socket.close();
  }
}

/** The response a turn's terminal event carries. */
export function responseOf(events: readonly SocketEvent[]): any {
  return events.at(-1)?.response;
}
