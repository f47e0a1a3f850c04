import { createServer } from "node:net";
import { createParser } from "eventsource-parser";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CentrifugoTestServer } from "../../helpers/centrifugo-test-server.js";
import { ChannelUpstream } from "../../helpers/channel-upstream.js";
import { metricSum } from "../../helpers/failover-scenario.js";
import { chatBody, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

const CONNECTION_TOKEN = "conn-token-1";
const subscriptionToken = (channel: string) => `sub-token-for-${channel}`;
const requestHeaders = { authorization: "Bearer sk-test", "service-workspace": "acme", "content-type": "application/json" };

let server: CentrifugoTestServer;
let upstream: ChannelUpstream;
/**
 * Polls slowly (a minute apart once its channel is live): text and ends that come within the test's
 * time came from the channel, however busy the machine (the list shows no text until the end anyway).
 */
let slow: RunningAdapter;
/** Polls fast (200 ms at most): for the faults, where the list must finish the answer. */
let fast: RunningAdapter;
/** Changes to the realtime fields of the next query created. */
let fieldsOverride: (id: string) => Record<string, unknown> = () => ({});
let closedPort = 0;

beforeAll(async () => {
  server = await CentrifugoTestServer.start({ connectionTokens: [CONNECTION_TOKEN], subscriptionTokens: subscriptionToken });
  upstream = await ChannelUpstream.start((id) => {
    const channel = `queries:${id}`;
    return {
      channel,
      token: CONNECTION_TOKEN,
      subscription_token: subscriptionToken(channel),
      ws_url: server.url,
      since: { offset: server.top(channel), epoch: server.epoch },
      ...fieldsOverride(id),
    };
  });
  slow = await startAdapter(upstream.url, { POLL_INTERVAL_MIN_MS: "20", POLL_INTERVAL_MAX_MS: "60000", QUERY_TIMEOUT_MS: "60000" });
  fast = await startAdapter(upstream.url, { POLL_INTERVAL_MIN_MS: "20", POLL_INTERVAL_MAX_MS: "200", QUERY_TIMEOUT_MS: "20000" });
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
afterAll(async () => {
  await slow.close();
  await fast.close();
  await upstream.close();
  await server.close();
});
beforeEach(() => {
  fieldsOverride = () => ({});
  server.connectError = null;
  server.silent = false;
});

/** Waits for `condition` (a generous deadline: a busy machine makes a test slower, never failing). */
async function until(condition: () => boolean, timeoutMs = 15_000, what = "condition") {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A streamed request read as it arrives: its content deltas, its last choice chunk, and its end. */
function openStream(adapter: RunningAdapter, content = "What is the leave policy?") {
  const state = { deltas: [] as string[], chunks: [] as any[], errors: [] as unknown[], done: false };
  const finished = (async () => {
    const response = await fetch(`${adapter.url}/v1/chat/completions`, {
      method: "POST",
      headers: requestHeaders,
      body: JSON.stringify(chatBody(content, { stream: true })),
    });
    const parser = createParser({
      onEvent: (event) => {
        if (event.data === "[DONE]") return;
        const chunk = JSON.parse(event.data);
        if (chunk.error) state.errors.push(chunk.error);
        state.chunks.push(chunk);
        const text = chunk.choices?.[0]?.delta?.content;
        if (text) state.deltas.push(text);
      },
    });
    const decoder = new TextDecoder();
    for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(bytes, { stream: true }));
    state.done = true;
  })();
  return { state, finished, text: () => state.deltas.join("") };
}

/** Waits for the adapter to create the query, and returns it with its channel name. */
async function created(before: number) {
  await until(() => upstream.queries.size > before, undefined, "the create");
  const query = upstream.last!;
  return { query, channel: `queries:${query.id}` };
}

async function fallbacks(adapter: RunningAdapter): Promise<Record<string, number>> {
  const metric = await adapter.adapter.metrics.realtimeFallbacks.get();
  return Object.fromEntries(metric.values.map((value) => [String(value.labels.reason), value.value]));
}

const WORDS = ["Employees", " get", " 25", " days", " of", " annual", " leave", " [1]."];
const FINAL = `${WORDS.join("")}\n\nSources:\n[1] handbook.md — Leave policy`;

describe("the realtime channel", () => {
  it("streams an answer word by word as it is published, though the list shows none of it, and ends it at once", async () => {
    const stream = openStream(slow);
    const { query, channel } = await created(upstream.queries.size);
    await until(() => server.subscriptions === 1, undefined, "the subscription");
    let sent = "";
    for (const word of WORDS) {
      server.publish(channel, { delta: word });
      sent += word;
      // The list shows nothing, and the next poll is a minute away: this came from the channel.
      await until(() => stream.text() === sent, undefined, `"${word}"`);
    }
    expect(stream.state.deltas).toEqual(WORDS);
    query.status = "PROCESSED";
    query.output = FINAL;
    // The next scheduled poll is a minute away: ending within the test's time is the poll the channel's end asked for.
    server.publish(channel, { status: "PROCESSED" });
    await stream.finished;
    expect(stream.text()).toBe(FINAL);
    const last = stream.state.chunks.filter((chunk) => chunk.choices?.[0]?.delta?.annotations).at(-1);
    expect(last.choices[0].delta.annotations).toEqual([
      // Over exactly the text the client received: the marker's code points.
      {
        type: "url_citation",
        url_citation: { url: "urn:workspace-document:acme:handbook.md", title: "Leave policy", start_index: FINAL.indexOf("[1]"), end_index: FINAL.indexOf("[1]") + 3 },
      },
    ]);
    expect(stream.state.errors).toEqual([]);
    await until(() => server.openConnections === 0, undefined, "the disconnect");
    expect(slow.adapter.realtime?.openConnections).toBe(0);
  });

  it("ends a plain answer as soon as the channel says the query ended, with the list's confirmed answer", async () => {
    const before = upstream.queries.size;
    const response = fetch(`${slow.url}/v1/chat/completions`, { method: "POST", headers: requestHeaders, body: JSON.stringify(chatBody("leave?")) });
    const { query, channel } = await created(before);
    await until(() => server.subscriptions === 1, undefined, "the subscription");
    const publications = async () => (await metricSum([slow], "adapter_realtime_publications_total"))[0] as number;
    const publishedBefore = await publications();
    server.publish(channel, { delta: "Draft text" });
    await waitFor(async () => (await publications()) > publishedBefore, "the draft received");
    query.status = "PROCESSED";
    query.output = FINAL;
    // As above: the next scheduled poll is a minute away.
    server.publish(channel, { status: "PROCESSED" });
    const body = (await (await response).json()) as any;
    expect(body.choices[0].message.content).toBe(FINAL);
  });

  /** A streamed answer under a fault: the whole answer arrives, exactly once, with no error. */
  async function answerDespite(fault: {
    before?: (channel: string) => void;
    midway?: (channel: string) => void | Promise<void>;
    /** Waits for the fault's outcome before the query ends. */
    beforeEnd?: (stream: ReturnType<typeof openStream>) => Promise<void>;
  }) {
    const before = upstream.queries.size;
    const fellBack = async () => Object.values(await fallbacks(fast)).reduce((sum, count) => sum + count, 0);
    const fellBackBefore = await fellBack();
    const stream = openStream(fast);
    const { query, channel } = await created(before);
    fault.before?.(channel);
    // The adapter tries the channel: subscribed, or given up (refused, unreachable, not allowed).
    await waitFor(async () => server.subscriptions > 0 || (await fellBack()) > fellBackBefore, "the channel tried");
    const live = server.subscriptions > 0;
    for (const word of WORDS.slice(0, 4)) server.publish(channel, { delta: word });
    if (live) await until(() => stream.text() === WORDS.slice(0, 4).join(""), undefined, "the first words");
    await fault.midway?.(channel);
    for (const word of WORDS.slice(4)) server.publish(channel, { delta: word });
    if (live && !fault.midway) await until(() => stream.text() === WORDS.join(""), undefined, "every word");
    await fault.beforeEnd?.(stream);
    query.status = "PROCESSED";
    query.output = FINAL;
    server.publish(channel, { status: "PROCESSED" });
    await stream.finished;
    expect(stream.state.errors).toEqual([]);
    expect(stream.text()).toBe(FINAL);
    return stream;
  }

  it("yields the whole answer exactly once when the endpoint refuses connections, tokens or subscriptions", async () => {
    const counts = await fallbacks(fast);
    fieldsOverride = () => ({ ws_url: `ws://127.0.0.1:${closedPort}/connection/websocket` });
    await answerDespite({});
    fieldsOverride = () => ({ token: "forged" });
    await answerDespite({});
    fieldsOverride = () => ({ subscription_token: "forged" });
    await answerDespite({});
    fieldsOverride = () => ({});
    server.connectError = { code: 109, message: "token expired" };
    await answerDespite({});
    const after = await fallbacks(fast);
    expect((after.connect_failed ?? 0) - (counts.connect_failed ?? 0)).toBe(1);
    expect((after.token_refused ?? 0) - (counts.token_refused ?? 0)).toBe(2);
    expect((after.subscribe_refused ?? 0) - (counts.subscribe_refused ?? 0)).toBe(1);
  });

  it("never contacts a foreign host, and still answers", async () => {
    const accepted = server.accepted;
    const counts = await fallbacks(fast);
    fieldsOverride = () => ({ ws_url: server.url.replace("127.0.0.1", "localhost") });
    await answerDespite({});
    expect(server.accepted).toBe(accepted);
    expect((await fallbacks(fast)).host_not_allowed).toBe((counts.host_not_allowed ?? 0) + 1);
  });

  it("recovers what was published while the connection was down, and streams it once", async () => {
    const counts = await fallbacks(fast);
    const stream = await answerDespite({
      midway: () => server.dropAll(),
      // Reconnected, recovered, and every word streamed before the query ends.
      beforeEnd: (stream) => until(() => stream.text() === WORDS.join(""), undefined, "the recovered words"),
    });
    // Every word came from the channel (the list showed none until the end), each once; those
    // recovered together may arrive in one delta.
    expect(stream.state.deltas.join("").startsWith(WORDS.join(""))).toBe(true);
    expect(await fallbacks(fast)).toEqual(counts);
  });

  it("answers from the list when a dropped connection's position cannot be recovered, or the channel goes silent", async () => {
    const counts = await fallbacks(fast);
    await answerDespite({
      midway: () => {
        server.rotateEpoch();
        server.dropAll();
      },
      beforeEnd: async () => {
        await waitFor(async () => ((await fallbacks(fast)).unrecoverable ?? 0) > (counts.unrecoverable ?? 0), "the channel given up as unrecoverable");
      },
    });
    await answerDespite({
      midway: async () => {
        server.silent = true;
        // Until the silence outlasts what a live channel is allowed (twice the longest poll interval).
        await waitFor(async () => ((await fallbacks(fast)).silent ?? 0) > (counts.silent ?? 0), "the channel given up as silent");
      },
    });
    const after = await fallbacks(fast);
    expect((after.unrecoverable ?? 0) - (counts.unrecoverable ?? 0)).toBe(1);
    expect((after.silent ?? 0) - (counts.silent ?? 0)).toBe(1);
  });

  it("leaves no connection, subscription or timer behind once the last request is over", async () => {
    const count = () => {
      const resources = process.getActiveResourcesInfo();
      return { timers: resources.filter((name) => name === "Timeout").length, sockets: resources.filter((name) => name === "TCPSocketWrap").length };
    };
    /** One request, then three at once on one shared connection, to their ends. */
    const round = async () => {
      await answerDespite({});
      const before = upstream.queries.size;
      const streams = [openStream(fast, "one"), openStream(fast, "two"), openStream(fast, "three")];
      await until(() => upstream.queries.size === before + 3 && server.subscriptions === 3, undefined, "three subscriptions");
      expect(fast.adapter.realtime?.openConnections).toBe(1);
      expect(server.openConnections).toBe(1);
      for (const query of [...upstream.queries.values()].slice(-3)) {
        query.status = "PROCESSED";
        server.publish(`queries:${query.id}`, { status: "PROCESSED" });
      }
      await Promise.all(streams.map((stream) => stream.finished));
      await until(() => server.openConnections === 0, undefined, "the disconnect");
      await new Promise((resolve) => setTimeout(resolve, 100)); // sockets close a moment after
    };
    // The first round opens the HTTP keep-alive connections the later ones reuse.
    await round();
    const baseline = count();
    await round();
    await round();
    expect(fast.adapter.realtime?.openConnections).toBe(0);
    expect(fast.adapter.realtime?.activeSubscriptions).toBe(0);
    // Sockets close asynchronously: give the last ones time on a busy machine, then compare. Nothing
    // grows over two more rounds (the baseline may still hold a socket closing: a bound, not an equality).
    const within = () => count().timers <= baseline.timers && count().sockets <= baseline.sockets;
    await until(within, undefined, "the baseline of timers and sockets").catch(() => undefined);
    expect({ after: count(), baseline, within: within() }).toMatchObject({ baseline, within: true });
  });
});
