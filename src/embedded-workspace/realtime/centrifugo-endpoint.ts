import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";

/** The path the endpoint serves, as Centrifugo's WebSocket transport does. */
export const REALTIME_PATH = "/connection/websocket";

/** Publications a channel keeps for recovery (Centrifugo's history size); older ones cannot be recovered. */
const HISTORY_SIZE = 10_000;
/** Channels nobody publishes to or subscribes to are forgotten after this long. */
const CHANNEL_RETENTION_MS = 10 * 60_000;
/** Centrifugo's default ping interval. */
const PING_SECONDS = 25;

/** One channel's stream: its epoch, top offset and recent publications. */
interface Stream {
  epoch: string;
  top: number;
  history: { offset: number; data: unknown }[];
  touchedAt: number;
}

/** One client connection. */
interface Peer {
  socket: WebSocket;
  /** The connection token's subject once connected (a hash of the credential), else null. */
  user: string | null;
  channels: Set<string>;
  /** Frames waiting for this turn's flush (several messages go out as one frame, `\n`-separated). */
  pending: string[];
}

/**
 * The embedded workspace's realtime endpoint (docs/architecture/upstream.md#the-embedded-workspace): a
 * Centrifugo client-protocol server (JSON over WebSocket, protocol v2) that the real `centrifuge`
 * client accepts. It checks connection and subscription tokens as Centrifugo does (close 3500 for
 * a bad connection token, error 103 for a bad subscription token), keeps each channel's recent
 * publications with offsets in an epoch so that a subscriber can recover from a position, pings,
 * and batches the messages of one event-loop turn into one frame per connection.
 */
export class CentrifugoEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  private readonly peers = new Set<Peer>();
  private readonly streams = new Map<string, Stream>();
  private readonly secret = randomBytes(32);
  private pingTimer: NodeJS.Timeout | null = null;
  private flushQueued = false;
  private created = 0;

  constructor(private readonly now: () => number) {}

  /** Connections open now. */
  get openConnections(): number {
    return this.peers.size;
  }

  /** The connection token for a credential: its subject is a hash of the credential, signed. */
  connectionToken(credential: string): string {
    const user = createHash("sha256").update(credential).digest("hex").slice(0, 32);
    return `${user}.${this.sign(`connect:${user}`)}`;
  }

  /** The subscription token of a channel for the holder of a connection token. */
  subscriptionToken(connectionToken: string, channel: string): string {
    return this.sign(`subscribe:${connectionToken.split(".")[0] ?? ""}:${channel}`);
  }

  /** A channel's current position: where a subscriber created now starts from. */
  position(channel: string): { offset: number; epoch: string } {
    const stream = this.stream(channel);
    return { offset: stream.top, epoch: stream.epoch };
  }

  /** Publishes to a channel: kept for recovery and pushed to its subscribers. */
  publish(channel: string, data: unknown): void {
    const stream = this.stream(channel);
    stream.top += 1;
    stream.history.push({ offset: stream.top, data });
    if (stream.history.length > HISTORY_SIZE) stream.history.splice(0, stream.history.length - HISTORY_SIZE);
    const frame = JSON.stringify({ push: { channel, pub: { data, offset: stream.top } } });
    for (const peer of this.peers) if (peer.channels.has(channel)) this.queue(peer, frame);
  }

  /** The HTTP server's `upgrade` listener: serves the endpoint's path and refuses any other. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (new URL(request.url ?? "/", "http://localhost").pathname !== REALTIME_PATH) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => this.serve(ws));
  }

  /** Closes every connection and stops the ping timer. */
  close(): void {
    for (const peer of this.peers) peer.socket.terminate();
    this.peers.clear();
    this.stopPings();
    this.wss.close();
  }

  private serve(socket: WebSocket): void {
    const peer: Peer = { socket, user: null, channels: new Set(), pending: [] };
    this.peers.add(peer);
    if (!this.pingTimer) {
      this.pingTimer = setInterval(() => {
        for (const each of this.peers) if (each.user !== null) this.queue(each, "{}");
        this.forgetIdleStreams();
      }, PING_SECONDS * 1000).unref();
    }
    socket.on("message", (raw: RawData) => this.receive(peer, raw));
    socket.on("error", () => socket.terminate());
    socket.on("close", () => {
      this.peers.delete(peer);
      if (this.peers.size === 0) this.stopPings();
    });
  }

  private receive(peer: Peer, raw: RawData): void {
    for (const line of String(raw).split("\n")) {
      if (!line.trim()) continue;
      let command: Record<string, unknown>;
      try {
        command = JSON.parse(line) as Record<string, unknown>;
      } catch {
        peer.socket.close(3501, "bad request");
        return;
      }
      if (typeof command !== "object" || command === null) {
        peer.socket.close(3501, "bad request");
        return;
      }
      this.handle(peer, command);
    }
  }

  private handle(peer: Peer, command: Record<string, unknown>): void {
    const id = command.id;
    if (id === undefined) return; // a pong, or a `send` this endpoint has no use for
    if (typeof id !== "number" || !Number.isInteger(id) || id <= 0) {
      peer.socket.close(3501, "bad request");
      return;
    }
    if (isObject(command.connect)) {
      const token = typeof command.connect.token === "string" ? command.connect.token : "";
      const user = this.verifyConnection(token);
      if (user === null) {
        peer.socket.close(3500, "invalid token");
        return;
      }
      peer.user = user;
      this.reply(peer, { id, connect: { client: randomUUID(), version: "embedded", ping: PING_SECONDS, pong: true } });
      return;
    }
    if (peer.user === null) {
      peer.socket.close(3501, "bad request");
      return;
    }
    if (isObject(command.subscribe)) {
      this.subscribe(peer, id, command.subscribe);
      return;
    }
    if (isObject(command.unsubscribe)) {
      const channel = command.unsubscribe.channel;
      if (typeof channel === "string") peer.channels.delete(channel);
      this.reply(peer, { id, unsubscribe: {} });
      return;
    }
    this.reply(peer, { id, error: { code: 104, message: "method not found" } });
  }

  private subscribe(peer: Peer, id: number, request: Record<string, unknown>): void {
    const channel = typeof request.channel === "string" ? request.channel : "";
    const token = typeof request.token === "string" ? request.token : "";
    if (!channel || !this.verify(`subscribe:${peer.user}:${channel}`, token)) {
      this.reply(peer, { id, error: { code: 103, message: "permission denied" } });
      return;
    }
    if (peer.channels.has(channel)) {
      this.reply(peer, { id, error: { code: 105, message: "already subscribed" } });
      return;
    }
    const stream = this.stream(channel);
    const result: Record<string, unknown> = { recoverable: true, positioned: true, epoch: stream.epoch, offset: stream.top };
    if (request.recover === true) {
      const offset = typeof request.offset === "number" ? request.offset : 0;
      const epoch = typeof request.epoch === "string" ? request.epoch : "";
      const missed = stream.history.filter((publication) => publication.offset > offset);
      const covered = missed.length > 0 ? missed[0]?.offset === offset + 1 : offset === stream.top;
      result.was_recovering = true;
      if ((epoch === "" || epoch === stream.epoch) && covered) {
        result.recovered = true;
        result.publications = missed.map((publication) => ({ data: publication.data, offset: publication.offset }));
      }
    }
    peer.channels.add(channel);
    this.reply(peer, { id, subscribe: result });
  }

  private reply(peer: Peer, message: unknown): void {
    this.queue(peer, JSON.stringify(message));
  }

  private queue(peer: Peer, frame: string): void {
    peer.pending.push(frame);
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      for (const each of this.peers) {
        if (each.pending.length === 0) continue;
        const frames = each.pending.join("\n");
        each.pending = [];
        if (each.socket.readyState === each.socket.OPEN) each.socket.send(frames);
      }
    });
  }

  private stream(channel: string): Stream {
    let stream = this.streams.get(channel);
    if (!stream) {
      this.created += 1;
      if (this.created % 256 === 0) this.forgetIdleStreams();
      stream = { epoch: randomBytes(4).toString("hex"), top: 0, history: [], touchedAt: this.now() };
      this.streams.set(channel, stream);
    }
    stream.touchedAt = this.now();
    return stream;
  }

  private forgetIdleStreams(): void {
    const subscribed = new Set<string>();
    for (const peer of this.peers) for (const channel of peer.channels) subscribed.add(channel);
    const cutoff = this.now() - CHANNEL_RETENTION_MS;
    for (const [channel, stream] of this.streams) {
      if (stream.touchedAt < cutoff && !subscribed.has(channel)) this.streams.delete(channel);
    }
  }

  private stopPings(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  private verifyConnection(token: string): string | null {
    const [user, mac] = token.split(".");
    return user && mac && this.verify(`connect:${user}`, mac) ? user : null;
  }

  private sign(message: string): string {
    return createHmac("sha256", this.secret).update(message).digest("base64url");
  }

  private verify(message: string, mac: string): boolean {
    const expected = Buffer.from(this.sign(message));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
