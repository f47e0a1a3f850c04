import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedWorkspace, type RunningWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { CentrifugoTestServer } from "../../helpers/centrifugo-test-server.js";
import { ChannelUpstream } from "../../helpers/channel-upstream.js";
import { metricSum } from "../../helpers/failover-scenario.js";
import { postStream } from "../../helpers/read-sse.js";
import { chatBody, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// A canary credential: it must not appear in any log line, error body, stream frame or header.
const CANARY = "sk-canary-7f3a9c1e5b";
const logLines: string[] = [];
let workspace: RunningWorkspace;
let adapter: RunningAdapter;

beforeAll(async () => {
  workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [CANARY], stepDelayMs: 5 });
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  adapter = await startAdapter(workspace.url, { QUERY_TIMEOUT_MS: "1500" }, pino({ level: "trace" }, sink));
});
afterAll(async () => {
  await adapter.close();
  await workspace.close();
});

const canaryHeaders = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${CANARY}`,
  "service-workspace": "acme",
  "content-type": "application/json",
  ...extra,
});

async function exchange(body: unknown, extra: Record<string, string> = {}) {
  const response = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers: canaryHeaders(extra), body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, everything: `${JSON.stringify([...response.headers])}\n${text}` };
}

describe("the bearer credential never leaks", () => {
  it("in responses, headers, frames and trace-level logs, on every path", async () => {
    const seen: number[] = [];
    const outputs: string[] = [];
    for (const [body, extra] of [
      [chatBody("leave policy"), {}],
      [chatBody("leave", { model: "gpt-4" }), {}],
      [chatBody("leave [fault:failed]"), {}],
      [chatBody("leave [fault:stall]"), {}],
      [chatBody("leave"), { "service-workspace": "unknown-workspace" }],
    ] as const) {
      const result = await exchange(body, extra);
      seen.push(result.status);
      outputs.push(result.everything);
    }
    workspace.control.inject({ on: "create", kind: "status", status: 500 });
    const fiveHundred = await exchange(chatBody("leave"));
    seen.push(fiveHundred.status);
    outputs.push(fiveHundred.everything);
    for (const prompt of ["leave policy", "leave [fault:failed]", "leave [fault:stall]"]) {
      const stream = await postStream(`${adapter.url}/v1/chat/completions`, canaryHeaders(), chatBody(prompt, { stream: true }));
      outputs.push(`${JSON.stringify([...stream.headers])}\n${stream.raw}`);
    }
    const wrongKey = await fetch(`${adapter.url}/v1/chat/completions`, {
      method: "POST",
      headers: canaryHeaders({ authorization: `Bearer ${CANARY}x` }),
      body: JSON.stringify(chatBody("leave")),
    });
    outputs.push(await wrongKey.text());

    expect(seen).toEqual([200, 422, 502, 504, 404, 502]);
    expect(logLines.length).toBeGreaterThan(10);
    for (const text of [...outputs, ...logLines]) expect(text).not.toContain(CANARY.slice(3));
  });

  it("logs request id, workspace, query id, mode, status and latency, and no message content", async () => {
    await exchange(chatBody("a very private question about leave"), { "x-request-id": "req-123" });
    const line = logLines.map((text) => JSON.parse(text)).find((entry) => entry.requestId === "req-123");
    expect(line).toMatchObject({ workspace: "acme", mode: "ask", status: 200, path: "/v1/chat/completions" });
    expect(line.queryIds).toHaveLength(1);
    expect(typeof line.ms).toBe("number");
    expect(logLines.join("\n")).not.toContain("very private question");
  });
});

describe("realtime tokens never leak", () => {
  it("in logs at trace level or metrics, whether the channel works, is refused, unreachable or foreign", async () => {
    const secrets = { connection: "ctok-canary-51c0e8", subscription: "stok-canary-9b7d22", inUrl: "urltok-canary-3e6f40" };
    const server = await CentrifugoTestServer.start({ connectionTokens: [secrets.connection], subscriptionTokens: () => secrets.subscription });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    let fields: Record<string, unknown> = {};
    const upstream = await ChannelUpstream.start((id) => ({
      channel: `queries:${id}`,
      token: secrets.connection,
      subscription_token: secrets.subscription,
      ws_url: `${server.url}?token=${secrets.inUrl}`,
      since: { offset: 0, epoch: server.epoch },
      ...fields,
    }));
    const running = await startAdapter(upstream.url, { POLL_INTERVAL_MAX_MS: "50" }, pino({ level: "trace" }, sink));
    try {
      const variants: Record<string, unknown>[] = [
        {},
        { token: `${secrets.connection}-forged` },
        { subscription_token: `${secrets.subscription}-forged` },
        { ws_url: `ws://127.0.0.1:1/connection/websocket?token=${secrets.inUrl}` },
        { ws_url: `ws://localhost:${new URL(server.url).port}/connection/websocket?token=${secrets.inUrl}` },
      ];
      for (const variant of variants) {
        fields = variant;
        const before = upstream.queries.size;
        // The channel tried: subscribed, or given up (refused, unreachable, not allowed); then the query ends.
        const tried = async () => ((await metricSum([running], "adapter_realtime_fallbacks_total"))[0] as number) + server.commands.filter((command) => command === "subscribe").length;
        const triedBefore = await tried();
        const answer = fetch(`${running.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: "Bearer sk-test", "service-workspace": "acme", "content-type": "application/json" },
          body: JSON.stringify(chatBody("leave", { stream: true })),
        }).then((response) => response.text());
        await waitFor(() => upstream.queries.size > before, "the query to be created");
        await waitFor(async () => (await tried()) > triedBefore, "the realtime channel to be tried");
        const query = upstream.last!;
        query.status = "PROCESSED";
        query.output = "Done.";
        server.publish(`queries:${query.id}`, { status: "PROCESSED" });
        expect(await answer).toContain("Done.");
      }
      const metrics = await (await fetch(`${running.url}/metrics`)).text();
      expect(metrics).toContain("adapter_realtime_fallbacks_total");
      expect(lines.length).toBeGreaterThan(5);
      for (const text of [metrics, ...lines]) {
        for (const secret of Object.values(secrets)) expect(text).not.toContain(secret.slice(5));
      }
    } finally {
      await running.close();
      await upstream.close();
      await server.close();
    }
  });
});
