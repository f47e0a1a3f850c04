import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { Agent, request } from "undici";
import WebSocket, { type RawData, WebSocketServer } from "ws";
import { type HostPolicy, refusalOf } from "../../upstream/realtime/allowed-hosts.js";
import { packageVersion } from "../../util/package-info.js";
import { ExchangeRedaction, type RedactionOptions } from "./redact-exchange.js";
import { shownUrl } from "./redact-secrets.js";
import {
  RECORDING_FORMAT,
  RECORDING_VERSION,
  type RecordedConnection,
  type RecordedExchange,
  type Recording,
} from "./recording-format.js";

/** What the tap needs to know: where the service is, and what to keep of its exchanges. */
export interface TapOptions extends RedactionOptions {
  /** The service's base URL (a path is kept, userinfo never used). */
  target: string;
  /** Which `ws_url`s may be relayed: the adapter's own rule for the service (REALTIME_ALLOWED_HOSTS); others are left as they are. */
  policy: HostPolicy;
  now?: () => number;
}

/** Headers that belong to one hop, never passed on. */
const HOP_BY_HOP = new Set(["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer", "content-length"]);
/** The path the tap serves relayed realtime connections under: `/realtime/<n>/…`. */
const RELAY_PATH = /^\/realtime\/(\d+)(?:\/|$)/;

/**
 * A loopback pass-through in front of the service that records every exchange of a `check` run
 * (docs/check.md#recordings): HTTP requests and responses, and the realtime connections, whose
 * `ws_url` it rewrites to itself (only those the adapter would follow) so that their frames pass
 * through it too. What it records is redacted as it goes: credentials as labels, tokens out,
 * content as placeholders unless kept. What the probes receive is the service's answer unchanged
 * but for that `ws_url`.
 */
export class RecordingTap {
  /** The check running now: each exchange is labelled with it. */
  probe = "start";
  private readonly server: Server;
  private readonly sockets = new WebSocketServer({ noServer: true });
  private readonly dispatcher = new Agent({ connections: 32 });
  private readonly target: URL;
  private readonly basePath: string;
  private readonly exchanges: RecordedExchange[] = [];
  private readonly connections: RecordedConnection[] = [];
  private readonly relayTargets: string[] = [];
  private readonly open = new Set<WebSocket>();
  private readonly redaction: ExchangeRedaction;
  private readonly now: () => number;
  private readonly startedAt: number;
  private sequence = 0;

  private constructor(private readonly options: TapOptions) {
    this.target = new URL(options.target);
    this.basePath = this.target.pathname.replace(/\/+$/, "");
    this.redaction = new ExchangeRedaction(options);
    this.now = options.now ?? (() => performance.now());
    this.startedAt = this.now();
    this.server = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("end", () => void this.forward(incoming, Buffer.concat(chunks), outgoing));
    });
    this.server.on("upgrade", (incoming, socket, head) => this.relay(incoming, socket, head));
  }

  /** Starts a tap on a free loopback port. */
  static async start(options: TapOptions): Promise<RecordingTap> {
    const tap = new RecordingTap(options);
    await new Promise<void>((resolve) => tap.server.listen(0, "127.0.0.1", resolve));
    return tap;
  }

  /** The base URL to call instead of the service's. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.basePath}`;
  }

  /** Everything recorded so far. */
  recording(): Recording {
    return {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      recordedAt: new Date().toISOString(),
      adapterVersion: packageVersion(),
      upstream: { origin: this.target.origin, basePath: this.basePath },
      content: this.options.keepContent ? "kept" : "redacted",
      modeField: this.options.modeField,
      exchanges: [...this.exchanges].sort((a, b) => a.seq - b.seq),
      realtime: [...this.connections],
    };
  }

  /** Closes the relayed connections and the port. */
  async close(): Promise<void> {
    for (const socket of this.open) socket.terminate();
    this.sockets.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.dispatcher.close();
  }

  private async forward(incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse): Promise<void> {
    const started = this.now();
    const probe = this.probe;
    const url = new URL(incoming.url ?? "/", this.target.origin);
    const path = url.pathname.startsWith(this.basePath) ? url.pathname.slice(this.basePath.length) || "/" : url.pathname;
    const recordedRequest = {
      method: incoming.method ?? "GET",
      path,
      query: url.search.slice(1),
      headers: this.redaction.requestHeaders(incoming.headers),
      body: this.redaction.body(body, incoming.headers["content-type"]),
    };
    const controller = new AbortController();
    outgoing.on("close", () => {
      if (!outgoing.writableFinished) controller.abort();
    });
    try {
      const answer = await request(`${this.target.origin}${url.pathname}${url.search}`, {
        method: recordedRequest.method as "GET",
        headers: passedOn(incoming.headers),
        body: body.length > 0 ? body : null,
        dispatcher: this.dispatcher,
        signal: controller.signal,
        // The caller's own bounds apply (it gives up, and the tap with it); the tap adds none.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const received = Buffer.from(await answer.body.arrayBuffer());
      const contentType = String(answer.headers["content-type"] ?? "");
      this.exchanges.push({
        seq: this.next(),
        at: this.since(this.startedAt, started),
        probe,
        request: recordedRequest,
        response: {
          status: answer.statusCode,
          headers: this.redaction.responseHeaders(answer.headers),
          body: this.redaction.body(received, contentType),
          durationMs: this.since(started),
        },
      });
      const sent = this.relayedBody(received, contentType);
      const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
      outgoing.writeHead(answer.statusCode, { ...headers, "content-length": String(sent.length) }).end(sent);
    } catch (error) {
      const code = (error as { code?: string } | null)?.code ?? (controller.signal.aborted ? "the caller gave up" : "error");
      const response = { error: code, durationMs: this.since(started) };
      const at = this.since(this.startedAt, started);
      this.exchanges.push({ seq: this.next(), at, probe, request: recordedRequest, response });
      // The caller sees a failed connection, as it would have without the tap.
      outgoing.socket?.destroy();
    }
  }

  /** The service's body as the probes get it: a `ws_url` the adapter would follow now points at the tap. */
  private relayedBody(body: Buffer, contentType: string): Buffer {
    if (!contentType.includes("json") || !body.includes("ws_url")) return body;
    try {
      const rewritten = this.rewriteWsUrls(JSON.parse(body.toString("utf8")));
      return Buffer.from(JSON.stringify(rewritten));
    } catch {
      return body;
    }
  }

  private rewriteWsUrls(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.rewriteWsUrls(item));
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => {
        if (key !== "ws_url" || typeof item !== "string" || refusalOf(item, this.options.policy) !== null) return [key, this.rewriteWsUrls(item)];
        const index = this.relayTargets.push(item) - 1;
        const port = (this.server.address() as AddressInfo).port;
        return [key, `ws://127.0.0.1:${port}/realtime/${index}${new URL(item).pathname}`];
      }),
    );
  }

  private relay(incoming: IncomingMessage, socket: Duplex, head: Buffer): void {
    const index = RELAY_PATH.exec(new URL(incoming.url ?? "/", "http://tap").pathname)?.[1];
    const target = index === undefined ? undefined : this.relayTargets[Number(index)];
    if (target === undefined) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    const record: RecordedConnection = {
      seq: this.next(),
      at: this.since(this.startedAt),
      probe: this.probe,
      url: shownUrl(target),
      opened: false,
      frames: [],
      close: null,
    };
    this.connections.push(record);
    const protocol = incoming.headers["sec-websocket-protocol"];
    const upstream = new WebSocket(target, protocol ? protocol.split(",").map((part) => part.trim()) : []);
    // Until the service accepts, the caller's upgrade waits: a refusal reaches it as a failed upgrade, as it would have.
    upstream.once("error", () => {
      if (!record.opened) socket.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    });
    upstream.once("open", () => {
      record.opened = true;
      this.sockets.handleUpgrade(incoming, socket, head, (client) => this.pipe(client, upstream, record));
    });
  }

  private pipe(client: WebSocket, upstream: WebSocket, record: RecordedConnection): void {
    this.open.add(client);
    this.open.add(upstream);
    const frame = (from: "client" | "server", data: RawData) => {
      const text = String(data);
      const messages = text.split("\n").filter((line) => line.trim()).map((line) => this.redaction.message(line));
      record.frames.push({ seq: this.next(), at: this.since(this.startedAt), from, messages });
    };
    client.on("message", (data, binary) => {
      frame("client", data);
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary });
    });
    upstream.on("message", (data, binary) => {
      frame("server", data);
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary });
    });
    const ended = (by: "client" | "server", other: WebSocket) => (code: number, reason: Buffer) => {
      this.open.delete(client);
      this.open.delete(upstream);
      record.close ??= { seq: this.next(), by, code, reason: String(reason) };
      // Codes a peer may send on; 1005/1006 (none given, connection lost) are only ever observed.
      if (code === 1000 || (code >= 3000 && code <= 4999)) other.close(code, reason);
      else other.terminate();
    };
    client.on("close", ended("client", upstream));
    upstream.on("close", ended("server", client));
    client.on("error", () => client.terminate());
    upstream.on("error", () => upstream.terminate());
  }

  /** Milliseconds from `from` to `to` (now), in tenths: as fine as a recording needs. */
  private since(from: number, to = this.now()): number {
    return Math.round((to - from) * 10) / 10;
  }

  private next(): number {
    this.sequence += 1;
    return this.sequence;
  }
}

/** The request's headers as the service gets them: all but the hop's own. */
function passedOn(headers: IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && typeof value === "string") result[name] = value;
  }
  return result;
}
