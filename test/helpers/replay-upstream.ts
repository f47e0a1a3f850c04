import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type WebSocket, WebSocketServer } from "ws";
import { contentShape } from "../../src/check/recording/redact-content.js";
import { type RecordedExchange, type Recording, recordingSchema } from "../../src/check/recording/recording-format.js";

/** Reads `DIR/recording.json` as `check --record DIR` wrote it (docs/check.md#the-recording-format). */
export function readRecording(dir: string): Recording {
  return recordingSchema.parse(JSON.parse(readFileSync(join(dir, "recording.json"), "utf8")));
}

/** A running replay: where it listens, what it served, what it could not match. */
export interface ReplayUpstream {
  url: string;
  /** The recorded exchanges served, in order (a repeat of the last one of a kind included). */
  served: RecordedExchange[];
  /** Requests nothing in the recording answered (`POST /x`), answered 404. */
  unmatched: string[];
  close(): Promise<void>;
}

/** How long an exchange recorded after a channel's subscribe waits for that subscribe to come. */
const SUBSCRIBE_WAIT_MS = 5_000;

/** How a replay serves: `pace: "recorded"` waits each exchange's recorded duration before answering. */
export interface ReplayOptions {
  pace?: "at-once" | "recorded";
}

/** One recorded realtime channel: the answer to its subscribe, and what was pushed on it after. */
interface RecordedChannel {
  /** Where the client's subscribe stood among the recorded frames and exchanges. */
  subscribedAt: number;
  subscribed: unknown;
  pushes: { seq: number; message: unknown }[];
}

type ConnectOutcome = { reply: Record<string, unknown> } | { close: { code: number; reason: string } } | { refused: true };

/**
 * A recording of `check --record` served back as the upstream, over loopback HTTP and WebSocket
 * (docs/check.md#replaying-a-recording). Each request gets the first unused recorded exchange of
 * the same method and path (a create: of the same mode and question, by shape when the content was
 * redacted), from the last matched create on; once a kind is used up, its last exchange is served
 * again (a finished query stays finished). The query ids the client chose stand in for the recorded
 * ones everywhere, `ws_url`s point at the replay, and each realtime channel gets its recorded
 * subscribe answer and then its recorded pushes, released as the HTTP exchanges recorded before
 * them are served, so that the channel keeps its place beside the list.
 */
export async function startReplayUpstream(recording: Recording, options: ReplayOptions = {}): Promise<ReplayUpstream> {
  const exchanges = [...recording.exchanges].sort((a, b) => a.seq - b.seq);
  const used = new Set<number>();
  const lastOfKind = new Map<string, RecordedExchange>();
  const ids = new Map<string, string>();
  const served: RecordedExchange[] = [];
  const unmatched: string[] = [];
  const sessions = new Set<{ socket: WebSocket; subscriptions: Map<string, { channel: RecordedChannel; next: number }> }>();
  let anchor = 0;
  let released = 0;
  const { channels, outcomes } = readRealtime(recording);
  let nextOutcome = 0;
  /** The recorded channels a client has subscribed to here, and who waits for the next subscribe. */
  const subscribedLive = new Set<RecordedChannel>();
  const subscribeWaiters: (() => void)[] = [];
  /**
   * Holds an exchange recorded after a channel's subscribe until that subscribe has come (at most
   * SUBSCRIBE_WAIT_MS: a client may never subscribe), so that an answer served at once cannot end
   * the query before the channel is followed, which the recording says it was.
   */
  const subscribesBefore = async (seq: number) => {
    const deadline = Date.now() + SUBSCRIBE_WAIT_MS;
    const pending = () => [...channels.values()].some((channel) => channel.subscribedAt < seq && !subscribedLive.has(channel));
    while (pending() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        subscribeWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };

  const mapIds = (text: string) => {
    let result = text;
    for (const [recorded, live] of ids) result = result.replaceAll(recorded, live);
    return result;
  };
  const unmapIds = (text: string) => {
    let result = text;
    for (const [recorded, live] of ids) result = result.replaceAll(live, recorded);
    return result;
  };
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => void answer(incoming, Buffer.concat(chunks).toString("utf8"), outgoing));
  });
  const port = () => (server.address() as AddressInfo).port;

  async function answer(incoming: IncomingMessage, text: string, outgoing: ServerResponse): Promise<void> {
    const url = new URL(incoming.url ?? "/", "http://replay");
    const method = incoming.method ?? "GET";
    const body = parse(text);
    const exchange = match(method, url.pathname, url.search.slice(1), body);
    if (!exchange) {
      unmatched.push(`${method} ${url.pathname}`);
      outgoing.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ detail: "Not in the recording" }));
      return;
    }
    await subscribesBefore(exchange.seq);
    served.push(exchange);
    if (options.pace === "recorded") await new Promise((resolve) => setTimeout(resolve, exchange.response.durationMs));
    const { response } = exchange;
    if ("error" in response) {
      outgoing.socket?.destroy();
      return;
    }
    let sent = response.body === null ? "" : "json" in response.body ? mapIds(JSON.stringify(response.body.json)) : response.body.text;
    if (response.body !== null && "json" in response.body) sent = JSON.stringify(pointAtReplay(JSON.parse(sent), port()));
    outgoing.writeHead(response.status, { ...response.headers, "content-length": String(Buffer.byteLength(sent)) }).end(sent);
    flush();
  }

  function match(method: string, path: string, query: string, body: unknown): RecordedExchange | undefined {
    const kind = `${method} ${path}`;
    const candidates = exchanges
      .map((exchange, index) => ({ exchange, index }))
      .filter(({ exchange, index }) => !used.has(index) && exchange.request.method === method && exchange.request.path === path);
    const create = method === "POST" && path === "/queries" && isObject(body);
    // The most specific kind of match that has any candidate, from the last matched create on when it can.
    const tiers = [
      create ? candidates.filter(({ exchange }) => sameQuestion(exchange, body, recording)) : [],
      create ? candidates.filter(({ exchange }) => sameMode(exchange, body, recording.modeField)) : [],
      candidates.filter(({ exchange }) => exchange.request.query === unmapIds(query)),
      candidates,
    ];
    const tier = tiers.find((each) => each.length > 0) ?? [];
    const chosen = tier.find(({ index }) => index >= anchor) ?? tier[0];
    if (!chosen) {
      released = Number.POSITIVE_INFINITY;
      return lastOfKind.get(kind);
    }
    used.add(chosen.index);
    lastOfKind.set(kind, chosen.exchange);
    released = Math.max(released, chosen.exchange.seq);
    if (create) {
      anchor = chosen.index;
      const recordedId = (bodyOf(chosen.exchange) as { id?: unknown } | undefined)?.id;
      const liveId = (body as { id?: unknown }).id;
      if (typeof recordedId === "string" && typeof liveId === "string") ids.set(recordedId, liveId);
    }
    return chosen.exchange;
  }

  const sockets = new WebSocketServer({ noServer: true });
  server.on("upgrade", (incoming, socket, head) => {
    const outcome = outcomes[Math.min(nextOutcome, outcomes.length - 1)];
    nextOutcome += 1;
    if (!outcome || "refused" in outcome) {
      socket.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    sockets.handleUpgrade(incoming, socket, head, (ws) => serve(ws, outcome));
  });

  function serve(socket: WebSocket, outcome: Exclude<ConnectOutcome, { refused: true }>): void {
    const session = { socket, subscriptions: new Map<string, { channel: RecordedChannel; next: number }>() };
    sessions.add(session);
    socket.on("close", () => sessions.delete(session));
    const send = (message: unknown) => socket.send(mapIds(JSON.stringify(message)));
    socket.on("message", (raw) => {
      for (const line of String(raw).split("\n")) {
        const command = parse(line) as Record<string, unknown> | undefined;
        if (!isObject(command) || typeof command.id !== "number") continue;
        const { id } = command;
        if (isObject(command.connect)) {
          if ("close" in outcome) socket.close(outcome.close.code, outcome.close.reason);
          else send({ id, connect: outcome.reply });
        } else if (isObject(command.subscribe) && typeof command.subscribe.channel === "string") {
          const live = command.subscribe.channel;
          const channel = channels.get(unmapIds(live));
          if (!channel) send({ id, error: { code: 103, message: "permission denied (not in the recording)" } });
          else {
            send({ id, subscribe: channel.subscribed });
            session.subscriptions.set(live, { channel, next: 0 });
            subscribedLive.add(channel);
            for (const waiter of subscribeWaiters.splice(0)) waiter();
          }
        } else if (isObject(command.unsubscribe) && typeof command.unsubscribe.channel === "string") {
          session.subscriptions.delete(command.unsubscribe.channel);
          send({ id, unsubscribe: {} });
        } else send({ id, error: { code: 104, message: "method not found" } });
      }
      flush();
    });
  }

  /** Pushes every recorded publication whose turn has come: recorded before the last HTTP exchange served. */
  function flush(): void {
    for (const session of sessions) {
      for (const subscription of session.subscriptions.values()) {
        const { pushes } = subscription.channel;
        for (; subscription.next < pushes.length && (pushes[subscription.next]?.seq ?? 0) <= released; subscription.next += 1) {
          session.socket.send(mapIds(JSON.stringify(pushes[subscription.next]?.message)));
        }
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port()}`,
    served,
    unmatched,
    async close() {
      for (const session of sessions) session.socket.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The recorded channels (by recorded name) and each connection's connect outcome, in order. */
function readRealtime(recording: Recording): { channels: Map<string, RecordedChannel>; outcomes: ConnectOutcome[] } {
  const channels = new Map<string, RecordedChannel>();
  const outcomes: ConnectOutcome[] = [];
  for (const connection of recording.realtime) {
    if (!connection.opened) {
      outcomes.push({ refused: true });
      continue;
    }
    const subscribing = new Map<number, { name: string; seq: number }>();
    let connected = false;
    for (const frame of connection.frames) {
      for (const message of frame.messages) {
        if (!isObject(message)) continue;
        if (frame.from === "client") {
          if (isObject(message.subscribe) && typeof message.subscribe.channel === "string" && typeof message.id === "number") subscribing.set(message.id, { name: message.subscribe.channel, seq: frame.seq });
          continue;
        }
        if (isObject(message.connect) && !connected) {
          connected = true;
          // The replay sends no pings: the client must not wait for them.
          const { ping: _ping, pong: _pong, ...reply } = message.connect;
          outcomes.push({ reply });
        } else if (isObject(message.subscribe) && typeof message.id === "number") {
          const asked = subscribing.get(message.id);
          if (asked && !channels.has(asked.name)) channels.set(asked.name, { subscribedAt: asked.seq, subscribed: message.subscribe, pushes: [] });
        } else if (isObject(message.push) && typeof message.push.channel === "string") {
          channels.get(message.push.channel)?.pushes.push({ seq: frame.seq, message });
        }
      }
    }
    if (!connected && connection.close) outcomes.push({ close: { code: connection.close.code, reason: connection.close.reason } });
  }
  return { channels, outcomes };
}

/** Every `ws_url` of a body rewritten to the replay's own realtime endpoint (same path). */
function pointAtReplay(value: unknown, port: number): unknown {
  if (Array.isArray(value)) return value.map((item) => pointAtReplay(item, port));
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, key === "ws_url" && typeof item === "string" ? `ws://127.0.0.1:${port}${pathOf(item)}` : pointAtReplay(item, port)]),
  );
}

function sameQuestion(exchange: RecordedExchange, body: Record<string, unknown>, recording: Recording): boolean {
  const recorded = bodyOf(exchange) as Record<string, unknown> | undefined;
  if (!sameMode(exchange, body, recording.modeField) || typeof recorded?.content !== "string" || typeof body.content !== "string") return false;
  return recording.content === "kept" ? recorded.content === body.content : contentShape(recorded.content) === contentShape(body.content);
}

function sameMode(exchange: RecordedExchange, body: Record<string, unknown>, modeField: string): boolean {
  return (bodyOf(exchange) as Record<string, unknown> | undefined)?.[modeField] === body[modeField];
}

function bodyOf(exchange: RecordedExchange): unknown {
  const { body } = exchange.request;
  return body !== null && "json" in body ? body.json : undefined;
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "/connection/websocket";
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
