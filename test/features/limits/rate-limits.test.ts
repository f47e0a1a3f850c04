import OpenAI from "openai";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { credentialHash } from "../../../src/auth/credential-hash.js";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import type { AdapterEffects } from "../../../src/server/create-adapter.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { freePort, type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { API_KEY, chatBody, FIXTURE_DOCUMENTS, headers, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

const OTHER_KEY = "sk-other-key";

/** One answer request: status, headers and body. */
async function ask(
  adapter: { url: string },
  options: { content?: string; key?: string; workspace?: string; body?: Record<string, unknown>; path?: string; signal?: AbortSignal; origin?: string } = {},
) {
  const response = await fetch(`${adapter.url}${options.path ?? "/v1/chat/completions"}`, {
    method: "POST",
    // A browser's Origin only where the test asks for one: a deployment refuses one it does not list (CORS_ORIGINS).
    headers: headers({ authorization: `Bearer ${options.key ?? API_KEY}`, "service-workspace": options.workspace ?? "acme", ...(options.origin ? { origin: options.origin } : {}) }),
    body: JSON.stringify(options.body ?? chatBody(options.content ?? "leave policy")),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, any>) : text };
}

/** The sum of a metric's samples whose labels contain `labels` (e.g. `limit="rpm"`). */
async function metric(adapter: { url: string }, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${adapter.url}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, "gm"))]
    .filter((match) => (match[1] ?? "").includes(labels))
    .reduce((sum, match) => sum + Number(match[2]), 0);
}

/** Waits for `condition` with a generous deadline (WAIT_DEADLINE_MS): a busy machine makes a test slower, never failing. */
function until(condition: () => Promise<boolean> | boolean): Promise<boolean> {
  return waitFor(condition, "the condition", { intervalMs: 20 });
}

async function sharing(adapters: { url: string }[]): Promise<void> {
  for (const adapter of adapters) await until(async () => (await metric(adapter, "adapter_rate_limit_shared")) === 1);
}

describe("without rate limits", () => {
  it("answers as before, with no rate-limit headers", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 0 });
    const adapter = await startAdapter(workspace.url);
    try {
      expect(adapter.adapter.rateLimits).toBeUndefined();
      const answer = await ask(adapter);
      expect(answer.status).toBe(200);
      expect([...answer.headers.keys()].filter((name) => name.startsWith("x-ratelimit"))).toEqual([]);
    } finally {
      await adapter.close();
      await workspace.close();
    }
  });
});

describeWith(REDIS, "rate limits across replicas", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  const running: RunningAdapter[] = [];
  let prefixes = 0;

  /** Replicas in one process, each with connections of its own, sharing one Redis under a prefix of their own. */
  async function replicas(count: number, environment: Record<string, string>, effects: AdapterEffects = {}): Promise<RunningAdapter[]> {
    const prefix = `rate-limits-${process.pid}-${(prefixes += 1)}:`;
    const started = await Promise.all(
      Array.from({ length: count }, () =>
        // A command may take 5 s before it counts as failed (the default is 1 s): a healthy Redis on a
        // busy machine can be that slow, and a slot whose release failed would stay taken for its lifetime.
        startAdapter(workspace.url, { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, REALTIME: "off", REDIS_COMMAND_TIMEOUT_MS: "5000", ...environment }, pino({ level: "silent" }), effects),
      ),
    );
    running.push(...started);
    await sharing(started);
    return started;
  }

  beforeAll(async () => {
    redis = await startRedis();
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme", "globex"], apiKeys: [API_KEY, OTHER_KEY], stepDelayMs: 5 });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((adapter) => adapter.close()));
  });
  afterAll(async () => {
    await workspace?.close();
    await redis?.stop();
  });

  it("refuses a key's request past its requests per minute across both replicas, before any upstream call; other keys and workspaces go on", async () => {
    const [first, second] = (await replicas(2, { RATE_LIMIT_RPM: "4", CORS_ORIGINS: "*" })) as [RunningAdapter, RunningAdapter];
    const createsBefore = workspace.control.calls.create;
    const answers = [];
    for (let index = 0; index < 5; index += 1) answers.push(await ask(index % 2 ? second : first, { origin: "https://app.example" }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 429]);
    expect(workspace.control.calls.create - createsBefore).toBe(4);
    // The headers count down across the replicas.
    expect(answers.map((answer) => answer.headers.get("x-ratelimit-remaining-requests"))).toEqual(["3", "2", "1", "0", "0"]);
    for (const answer of answers) {
      expect(answer.headers.get("x-ratelimit-limit-requests")).toBe("4");
      expect(answer.headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+(\.\d+)?s|\d+ms|1m0s)$/);
      expect(answer.headers.get("x-ratelimit-limit-tokens")).toBeNull();
    }
    const refused = answers[4] as Awaited<ReturnType<typeof ask>>;
    const waitMs = Number(refused.headers.get("retry-after-ms"));
    expect(waitMs).toBeGreaterThan(50_000);
    expect(waitMs).toBeLessThanOrEqual(60_000);
    expect(refused.headers.get("retry-after")).toBe(String(Math.ceil(waitMs / 1000)));
    expect(refused.headers.get("x-should-retry")).toBeNull();
    expect(refused.body).toEqual({
      detail: expect.stringMatching(/^Rate limit reached for this key in workspace 'acme' on requests per minute \(RPM\): limit 4\. Please try again in/),
      error: { message: expect.any(String), type: "rate_limit_error", param: null, code: "rate_limit_exceeded" },
    });
    // Browsers may read them.
    const exposed = (refused.headers.get("access-control-expose-headers") ?? "").split(/,\s*/);
    for (const name of ["retry-after", "retry-after-ms", "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", "x-ratelimit-remaining-tokens"]) {
      expect(exposed).toContain(name);
    }
    // Another key in the same workspace, and the same key in another workspace, have their own counts.
    const otherKey = await ask(second, { key: OTHER_KEY });
    const otherWorkspace = await ask(first, { workspace: "globex" });
    expect([otherKey.status, otherWorkspace.status]).toEqual([200, 200]);
    expect([otherKey.headers.get("x-ratelimit-remaining-requests"), otherWorkspace.headers.get("x-ratelimit-remaining-requests")]).toEqual(["3", "3"]);
    // The Responses API is the same edge.
    const response = await ask(second, { path: "/v1/responses", body: { model: "ask", input: "leave policy" } });
    expect(response.status).toBe(429);
    expect(await metric(first, "adapter_rate_limited_total", 'limit="rpm",workspace="acme"')).toBe(1);
    expect(await metric(second, "adapter_rate_limited_total", 'limit="rpm",workspace="acme"')).toBe(1);
  });

  it("counts MCP tool calls that start an answer against the same limit, across replicas; listing tools is free", async () => {
    const [first, second] = (await replicas(2, { RATE_LIMIT_RPM: "3" })) as [RunningAdapter, RunningAdapter];
    const mcp = (adapter: RunningAdapter, body: Record<string, unknown>) =>
      fetch(`${adapter.url}/mcp`, {
        method: "POST",
        headers: headers({ accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" }),
        body: JSON.stringify({ jsonrpc: "2.0", ...body }),
      });
    for (let index = 0; index < 4; index += 1) expect((await mcp(first, { id: index, method: "tools/list" })).status).toBe(200);
    const createsBefore = workspace.control.calls.create;
    const calls = [];
    for (let index = 0; index < 3; index += 1) {
      const replica = index % 2 ? second : first;
      calls.push(await mcp(replica, { id: `call-${index}`, method: "tools/call", params: { name: "ask", arguments: { question: "leave policy" } } }));
    }
    expect(calls.map((call) => call.status)).toEqual([200, 200, 200]);
    expect(calls.map((call) => call.headers.get("x-ratelimit-remaining-requests"))).toEqual(["2", "1", "0"]);
    // Over the limit: a 429 with retry-after, and a JSON-RPC error naming the call, before any upstream call.
    const refused = await mcp(second, { id: "call-3", method: "tools/call", params: { name: "reason", arguments: { question: "leave policy" } } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after-ms"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ jsonrpc: "2.0", id: "call-3", error: { data: { type: "rate_limit_error", code: "rate_limit_exceeded" } } });
    expect(workspace.control.calls.create - createsBefore).toBe(3);
    // A chat completion of the same key and workspace shares the count.
    expect((await ask(first)).status).toBe(429);
  });

  it("applies a workspace's override instead of the defaults", async () => {
    const [adapter] = (await replicas(1, { RATE_LIMIT_RPM: "1", RATE_LIMIT_OVERRIDES: "globex=rpm:off" })) as [RunningAdapter];
    expect((await ask(adapter)).status).toBe(200);
    expect((await ask(adapter)).status).toBe(429);
    const free = await Promise.all([ask(adapter, { workspace: "globex" }), ask(adapter, { workspace: "globex" })]);
    expect(free.map((answer) => answer.status)).toEqual([200, 200]);
    expect(free[0]?.headers.get("x-ratelimit-limit-requests")).toBeNull();
  });

  it("frees the slot of a request whose client left, whose query failed, or that the upstream refused, at once", async () => {
    const [first, second] = (await replicas(2, { RATE_LIMIT_CONCURRENT: "1" })) as [RunningAdapter, RunningAdapter];
    // A stream that never ends holds the key's one slot, on either replica.
    const leaving = new AbortController();
    const stalled = ask(first, { body: chatBody("leave [fault:stall]", { stream: true }), signal: leaving.signal }).catch(() => null);
    await until(async () => (await metric(first, "adapter_rate_limit_slots_in_use")) === 1);
    const busy = await ask(second);
    expect(busy.status).toBe(429);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(busy.body).toMatchObject({ error: { code: "rate_limit_exceeded" }, detail: expect.stringMatching(/answers in flight: limit 1/) });
    expect(await metric(second, "adapter_rate_limited_total", 'limit="concurrent"')).toBe(1);
    leaving.abort();
    await stalled;
    await until(async () => (await metric(first, "adapter_rate_limit_slots_in_use")) === 0);
    expect((await ask(second)).status).toBe(200);
    // A failed query (502), then an upstream 429 that keeps its own retry-after: each frees its slot.
    const failed = await ask(first, { content: "leave [fault:failed]" });
    expect(failed.status).toBe(502);
    workspace.control.inject({ on: "create", kind: "status", status: 429, retryAfter: "7" });
    const upstreamRefused = await ask(second);
    expect(upstreamRefused.status).toBe(429);
    expect(upstreamRefused.headers.get("retry-after")).toBe("7");
    expect(upstreamRefused.headers.get("retry-after-ms")).toBeNull();
    expect((await ask(first)).status).toBe(200);
    expect([await metric(first, "adapter_rate_limit_slots_in_use"), await metric(second, "adapter_rate_limit_slots_in_use")]).toEqual([0, 0]);
    // One request after another, each sent as soon as the last one's answer arrived, on either replica: never refused.
    const inTurn = [];
    for (let index = 0; index < 10; index += 1) inTurn.push((await ask(index % 2 ? second : first)).status);
    expect(inTurn).toEqual(Array(10).fill(200));
  });

  it("frees the slots of streams a shutdown ends", async () => {
    const [first, second] = (await replicas(2, { RATE_LIMIT_CONCURRENT: "1", SHUTDOWN_GRACE_MS: "100" })) as [RunningAdapter, RunningAdapter];
    const stalled = ask(first, { body: chatBody("leave [fault:stall]", { stream: true }) });
    await until(async () => (await metric(first, "adapter_rate_limit_slots_in_use")) === 1);
    expect((await ask(second)).status).toBe(429);
    await first.shutdown();
    expect(String((await stalled).body)).toContain("service_unavailable");
    expect((await ask(second)).status).toBe(200);
  });

  it("counts the tokens of delivered answers, streamed ones that report no usage included, and refuses once the minute's tokens are spent", async () => {
    // An answer expected at one token: its reservation (the 12-byte question: 3 tokens, and 1) fits the tiny limit.
    const [first, second] = (await replicas(2, { RATE_LIMIT_TPM: "40", RATE_LIMIT_ANSWER_TOKENS: "ask:1" })) as [RunningAdapter, RunningAdapter];
    const plain = await ask(first);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("x-ratelimit-limit-tokens")).toBe("40");
    expect(plain.headers.get("x-ratelimit-remaining-tokens")).toBe("36");
    const usage = (plain.body as { usage: { total_tokens: number } }).usage.total_tokens;
    expect(usage).toBeGreaterThan(40);
    const refused = await ask(second);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
    expect(refused.body).toMatchObject({ detail: expect.stringMatching(/tokens per minute \(TPM\): limit 40/) });
    expect(Number(refused.headers.get("retry-after-ms"))).toBeGreaterThan(50_000);
    // A stream without include_usage, with another key: charged after delivery all the same.
    const streamed = await ask(second, { key: OTHER_KEY, body: chatBody("leave policy", { stream: true }) });
    expect(streamed.status).toBe(200);
    expect(String(streamed.body)).not.toContain('"usage":{');
    const tokensKey = `*limit:{${credentialHash(OTHER_KEY)}:acme}:tpm`;
    await until(async () => (await redis.client.keys(tokensKey)).length === 1);
    expect((await ask(first, { key: OTHER_KEY })).status).toBe(429);
  });

  it("lets the openai SDK's own retries through a tight limit: every call succeeds, none retried sooner than retry-after allows", async () => {
    // A window of 2 s instead of a minute, so that the SDK's waits fit in a test.
    const [adapter] = (await replicas(1, { RATE_LIMIT_RPM: "2" }, { rateWindowSeconds: 2 })) as [RunningAdapter];
    const attempts: { call: string; sent: number; received: number; status: number; retryAfterMs: number | null }[] = [];
    const client = new OpenAI({
      apiKey: API_KEY,
      baseURL: `${adapter.url}/v1`,
      defaultHeaders: { "Service-Workspace": "acme" },
      fetch: async (url, init) => {
        const sent = performance.now();
        const response = await fetch(url, init);
        const retryAfter = response.headers.get("retry-after-ms");
        const call = new Headers(init?.headers).get("x-call") ?? "";
        attempts.push({ call, sent, received: performance.now(), status: response.status, retryAfterMs: retryAfter === null ? null : Number(retryAfter) });
        return response;
      },
    });
    expect(client.maxRetries).toBe(2);
    const calls = Array.from({ length: 6 }, (_, index) =>
      client.chat.completions.create({ model: "ask", messages: [{ role: "user", content: "leave policy" }] }, { headers: { "x-call": String(index) } }),
    );
    const completions = await Promise.all(calls);
    expect(completions.every((completion) => completion.choices[0]?.message.content?.includes("25 days"))).toBe(true);
    expect(attempts.filter((attempt) => attempt.status === 429).length).toBeGreaterThanOrEqual(3);
    for (let index = 0; index < 6; index += 1) {
      const own = attempts.filter((attempt) => attempt.call === String(index));
      expect(own.at(-1)?.status).toBe(200);
      for (const [position, attempt] of own.entries()) {
        if (position === 0) continue;
        const previous = own[position - 1] as (typeof own)[number];
        expect(previous.status).toBe(429);
        expect(previous.retryAfterMs).toBeGreaterThan(0);
        expect(previous.retryAfterMs).toBeLessThanOrEqual(2000);
        expect(attempt.sent - previous.received).toBeGreaterThanOrEqual((previous.retryAfterMs as number) - 1);
      }
    }
  }, 30_000);

  it("goes on limiting, per process, and answering while Redis is stopped", async () => {
    const port = await freePort();
    const own = await startRedis({ port });
    const prefix = `rate-limits-outage-${process.pid}:`;
    const [first, second] = await Promise.all(
      // A command may wait a minute for a Redis that is connected: answering while it is stopped
      // (disconnected, so skipped at once) is then whatever ends within the test's time.
      [0, 1].map(() => startAdapter(workspace.url, { REDIS_URL: own.url, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_RPM: "3", REALTIME: "off", REDIS_COMMAND_TIMEOUT_MS: "60000" })),
    );
    running.push(first as RunningAdapter, second as RunningAdapter);
    await sharing([first as RunningAdapter, second as RunningAdapter]);
    expect((await ask(first as RunningAdapter)).status).toBe(200);
    await own.stop();
    await until(async () => (await metric(first as RunningAdapter, "adapter_rate_limit_shared")) === 0);
    const statuses = [];
    for (const adapter of [first, second] as RunningAdapter[]) for (let index = 0; index < 4; index += 1) statuses.push((await ask(adapter)).status);
    // Each replica counts on its own from the outage on: three each, then 429.
    expect(statuses).toEqual([200, 200, 200, 429, 200, 200, 200, 429]);
    expect(await metric(first as RunningAdapter, "adapter_rate_limit_fallbacks_total")).toBeGreaterThanOrEqual(4);
  });
});

describeWith(REDIS, "a replica killed while it holds slots", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let replica: Replica | undefined;
  let survivor: RunningAdapter | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 5 });
  });
  afterAll(async () => {
    await stopAll(replica ? [replica] : []);
    await survivor?.close();
    await workspace?.close();
    await redis?.stop();
  });

  it("does not lock the key out: its slot is free again within the slot's lifetime (SIGKILL)", async () => {
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `rate-limits-kill-${process.pid}:`, RATE_LIMIT_CONCURRENT: "1", RATE_LIMIT_SLOT_TTL_MS: "1500", REALTIME: "off" };
    replica = await startReplica(workspace.url, { ...environment, DEFAULT_WORKSPACE: "acme" });
    survivor = await startAdapter(workspace.url, environment);
    await sharing([replica, survivor]);
    const stalled = ask(replica, { body: chatBody("leave [fault:stall]", { stream: true }) }).catch(() => null);
    await until(async () => (await metric(replica as Replica, "adapter_rate_limit_slots_in_use")) === 1);
    // Renewed while the replica lives: its expiry moves on, and it is still held.
    const [slots] = await redis.client.keys(`${environment.REDIS_KEY_PREFIX}*:slots`);
    const [member, expiry] = await redis.client.zrange(slots as string, "0", "-1", "WITHSCORES");
    await until(async () => Number(await redis.client.zscore(slots as string, member as string)) > Number(expiry));
    expect((await ask(survivor)).status).toBe(429);
    replica.child.kill("SIGKILL");
    await stalled;
    expect((await ask(survivor)).status).toBe(429);
    // Free within its lifetime (1.5 s), not the default (30 s), which is past the wait's deadline (15 s).
    await until(async () => (await ask(survivor as RunningAdapter)).status === 200);
  }, 60_000); // a process of its own to start: slow on a busy machine
});
