import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/** A reply error of the Centrifugo protocol, e.g. `{code: 109, message: "token expired"}`. */
export interface ProtocolError {
  code: number;
  message: string;
  temporary?: boolean;
}

/** One client connection as the server sees it. */
interface Peer {
  socket: WebSocket;
  connected: boolean;
  channels: Set<string>;
  pingTimer: NodeJS.Timeout | null;
}

/** Settings of the test server. */
export interface TestServerOptions {
  /** Connection tokens accepted; any other closes the socket with 3500 "invalid token", as Centrifugo does. */
  connectionTokens?: string[];
  /** Subscription token expected per channel; a wrong one gets error 103 "permission denied". */
  subscriptionTokens?: Record<string, string> | ((channel: string) => string);
  /** Server ping interval in seconds (0: no pings). */
  pingSeconds?: number;
}

/**
 * A Centrifugo-protocol server (client protocol v2, JSON over WebSocket) for driving the real
 * `centrifuge` client in tests: connect and subscribe with tokens, recovery from a stream position,
 * publication pushes with offsets, pings, close codes, and the faults the adapter must survive
 * (refused tokens, refused subscriptions, dropped connections, lost positions, silence).
 */
export class CentrifugoTestServer {
  readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly peers = new Set<Peer>();
  private readonly history = new Map<string, { offset: number; data: unknown }[]>();
  private readonly tops = new Map<string, number>();
  epoch = "e1";
  /** Error to answer the next connects with (instead of accepting them). */
  connectError: ProtocolError | null = null;
  /** Error to answer subscribes with (instead of checking tokens). */
  subscribeError: ProtocolError | null = null;
  /** When true, subscribes never recover (as after a trimmed history). */
  forgetPositions = false;
  /** When true, publications are kept in history but not pushed, and pings stop (a silent channel). */
  silent = false;
  /** Every command received, in order (methods only: `connect`, `subscribe`, ...). */
  readonly commands: string[] = [];
  /** Connections accepted over the server's life. */
  accepted = 0;
  /** Pongs received (a client's answers to the server's pings). */
  pongs = 0;

  private constructor(private readonly options: TestServerOptions) {
    this.http = createServer((_request, response) => response.writeHead(404).end());
    this.http.on("upgrade", (request, socket, head) => {
      this.wss.handleUpgrade(request, socket, head, (ws) => this.serve(ws));
    });
  }

  /** Starts one on a free loopback port. */
  static async start(options: TestServerOptions = {}): Promise<CentrifugoTestServer> {
    const server = new CentrifugoTestServer(options);
    await new Promise<void>((resolve) => server.http.listen(0, "127.0.0.1", resolve));
    return server;
  }

  /** The `ws_url` of this server. */
  get url(): string {
    return `ws://127.0.0.1:${(this.http.address() as AddressInfo).port}/connection/websocket`;
  }

  /** Sockets open now. */
  get openConnections(): number {
    return this.peers.size;
  }

  /** Subscriptions held now, over all connections. */
  get subscriptions(): number {
    let count = 0;
    for (const peer of this.peers) count += peer.channels.size;
    return count;
  }

  /** The current top offset of a channel (its `since` for a query created now). */
  top(channel: string): number {
    return this.tops.get(channel) ?? 0;
  }

  /** Publishes to a channel: kept in history, pushed to subscribers. Returns the offset. */
  publish(channel: string, data: unknown): number {
    const offset = this.top(channel) + 1;
    this.tops.set(channel, offset);
    const log = this.history.get(channel) ?? [];
    log.push({ offset, data });
    this.history.set(channel, log);
    if (!this.silent) {
      for (const peer of this.peers) {
        if (peer.channels.has(channel)) this.send(peer, { push: { channel, pub: { data, offset } } });
      }
    }
    return offset;
  }

  /** Cuts every connection without a close frame (clients see code 1006 and reconnect). */
  dropAll(): void {
    for (const peer of this.peers) peer.socket.terminate();
  }

  /** Closes every connection with a close code and reason. */
  closeAll(code: number, reason: string): void {
    for (const peer of this.peers) peer.socket.close(code, reason);
  }

  /** A new epoch: earlier positions cannot be recovered. */
  rotateEpoch(): void {
    this.epoch = `e${Number(this.epoch.slice(1)) + 1}`;
  }

  /** Stops accepting and closes everything. */
  async close(): Promise<void> {
    for (const peer of this.peers) peer.socket.terminate();
    this.wss.close();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private serve(socket: WebSocket): void {
    this.accepted += 1;
    const peer: Peer = { socket, connected: false, channels: new Set(), pingTimer: null };
    this.peers.add(peer);
    socket.on("message", (raw) => {
      for (const line of String(raw).split("\n")) if (line.trim()) this.handle(peer, JSON.parse(line) as Record<string, unknown>);
    });
    socket.on("close", () => {
      if (peer.pingTimer) clearInterval(peer.pingTimer);
      this.peers.delete(peer);
    });
  }

  private handle(peer: Peer, command: Record<string, unknown>): void {
    const id = command.id as number | undefined;
    if (!id) {
      this.pongs += 1; // a pong
      return;
    }
    const method = Object.keys(command).find((key) => key !== "id") ?? "";
    this.commands.push(method);
    if (method === "connect") {
      const request = command.connect as { token?: string };
      if (this.connectError) return this.send(peer, { id, error: this.connectError });
      const tokens = this.options.connectionTokens;
      if (tokens && !tokens.includes(request.token ?? "")) return peer.socket.close(3500, "invalid token");
      peer.connected = true;
      const ping = this.options.pingSeconds ?? 0;
      this.send(peer, { id, connect: { client: randomUUID(), version: "test", ...(ping ? { ping, pong: true } : {}) } });
      if (ping) peer.pingTimer = setInterval(() => !this.silent && this.send(peer, {}), ping * 1000);
      return;
    }
    if (!peer.connected) return peer.socket.close(3501, "bad request");
    if (method === "subscribe") {
      const request = command.subscribe as { channel: string; token?: string; recover?: boolean; offset?: number; epoch?: string };
      if (this.subscribeError) return this.send(peer, { id, error: this.subscribeError });
      const tokens = this.options.subscriptionTokens;
      const expected = typeof tokens === "function" ? tokens(request.channel) : tokens?.[request.channel];
      if (expected !== undefined && request.token !== expected) return this.send(peer, { id, error: { code: 103, message: "permission denied" } });
      const top = this.top(request.channel);
      const result: Record<string, unknown> = { recoverable: true, positioned: true, epoch: this.epoch, offset: top };
      if (request.recover) {
        const offset = request.offset ?? 0;
        const missed = (this.history.get(request.channel) ?? []).filter((publication) => publication.offset > offset);
        const sameEpoch = !request.epoch || request.epoch === this.epoch;
        const covered = missed.length > 0 ? missed[0]?.offset === offset + 1 : offset === top;
        result.was_recovering = true;
        if (sameEpoch && covered && !this.forgetPositions) {
          result.recovered = true;
          result.publications = missed.map((publication) => ({ data: publication.data, offset: publication.offset }));
        }
      }
      peer.channels.add(request.channel);
      return this.send(peer, { id, subscribe: result });
    }
    if (method === "unsubscribe") {
      peer.channels.delete((command.unsubscribe as { channel: string }).channel);
      return this.send(peer, { id, unsubscribe: {} });
    }
    this.send(peer, { id, error: { code: 104, message: "method not found" } });
  }

  private send(peer: Peer, message: unknown): void {
    if (peer.socket.readyState === peer.socket.OPEN) peer.socket.send(JSON.stringify(message));
  }
}
