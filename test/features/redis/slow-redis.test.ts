import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWith, REDIS_SERVERS } from "../../helpers/external-programs.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { metricSum } from "../../helpers/failover-scenario.js";
import { headers, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

type Message = { role: string; content: string };

/** One chat turn: status, answer, the query it went to, and the body (for error shapes). */
async function ask(url: string, messages: Message[], extraHeaders: Record<string, string> = {}) {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(extraHeaders),
    body: JSON.stringify({ model: "ask", messages }),
  });
  const body = (await response.json()) as any;
  return {
    status: response.status,
    body,
    retryAfter: response.headers.get("retry-after"),
    queryId: response.headers.get("service-query-id"),
    answer: body.choices?.[0]?.message.content as string,
  };
}

/** CPU-bound processes that keep both cores busy while a test runs (bounded: they end on their own). */
function busyLoops(count: number, seconds: number): ChildProcess[] {
  const script = `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`;
  return Array.from({ length: count }, () => spawn(process.execPath, ["-e", script], { stdio: "ignore" }));
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describeWith(REDIS_SERVERS, "a slow Redis is not a down Redis", () => {
  let redis: RedisServer;
  let replicas: RunningAdapter[];
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    replicas = await Promise.all([0, 1].map(() => startAdapter(stack.workspace.url, { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "slow:" })));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await redis.stop();
  });

  it("continues every turn of conversations across two replicas while Redis sleeps and the machine is busy", async () => {
    const loops = busyLoops(3, 30);
    const sleeper = redis.client.duplicate({ lazyConnect: false });
    try {
      await sleeper.ping();
      /** A conversation as one kind of client holds it: one turn at a time, on the replica it is given. */
      type Turn = (url: string, turn: number) => Promise<{ status: number; body: unknown; queryId: string | null }>;
      const byHistory = (topic: string): Turn => {
        const history: Message[] = [{ role: "user", content: `What are the ${topic}?` }];
        return async (url, turn) => {
          const answer = await ask(url, history);
          history.push({ role: "assistant", content: answer.answer }, { role: "user", content: `And turn ${turn + 2}?` });
          return answer;
        };
      };
      const byHeader: Turn = (url, turn) => ask(url, [{ role: "user", content: `Travel expenses, turn ${turn + 1}?` }], { "x-conversation-id": "slow-conv" });
      let previous: string | undefined;
      const byPreviousResponse: Turn = async (url, turn) => {
        const answer = await respond(url, { model: "ask", input: `Incident reporting, turn ${turn + 1}?`, ...(previous ? { previous_response_id: previous } : {}) });
        previous = answer.body.id;
        return answer;
      };
      const conversations = [byHistory("annual leave"), byHistory("remote work"), byHistory("password rules"), byHeader, byPreviousResponse].map((take) => ({
        take,
        ids: [] as (string | null)[],
      }));
      const sleeps: Promise<unknown>[] = [];
      for (let turn = 0; turn < 4; turn += 1) {
        if (turn > 0) {
          // Redis stops answering for 300 ms, and this turn's lookups are sent while it sleeps (the
          // pause only lets the DEBUG SLEEP reach Redis first: on a busy machine the turn may come in
          // part after the sleep, a milder case that still must pass).
          const slept = sleeper.call("DEBUG", "SLEEP", "0.3");
          await new Promise((resolve) => setTimeout(resolve, 20));
          sleeps.push(slept);
        }
        await Promise.all(
          conversations.map(async (conversation, index) => {
            const replica = replicas[(turn + index) % 2] as RunningAdapter;
            const answer = await conversation.take(replica.url, turn);
            expect(answer.status, JSON.stringify(answer.body)).toBe(200);
            conversation.ids.push(answer.queryId);
          }),
        );
      }
      expect(await Promise.all(sleeps)).toEqual(["OK", "OK", "OK"]);
      for (const conversation of conversations) expect(new Set(conversation.ids).size, conversation.ids.join(" ")).toBe(1);
      const ids = new Set(conversations.map((conversation) => conversation.ids[0]));
      expect(ids.size).toBe(conversations.length);
    } finally {
      for (const loop of loops) loop.kill("SIGKILL");
      sleeper.disconnect();
    }
  });
});

/** A Responses API call: status, body, and the query it went to. */
async function respond(url: string, body: Record<string, unknown>) {
  const response = await fetch(`${url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any, queryId: response.headers.get("service-query-id"), retryAfter: response.headers.get("retry-after") };
}

/** Expects the interface's 503: `detail`, OpenAI's `error`, a `retry-after`. */
function expectRefused(answer: { status: number; body: any; retryAfter: string | null }, code: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(answer.retryAfter).toBe("1");
  expect(answer.body).toMatchObject({ detail: expect.stringContaining("not answered as a new conversation"), error: { type: "service_unavailable", code } });
}

describeWith(REDIS_SERVERS, "while Redis is unreachable, a continuation is continued or refused, never forked", () => {
  let redis: RedisServer;
  let first: RunningAdapter;
  let second: RunningAdapter;
  const creates = () => stack.workspace.control.creates.length;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    // A command waits up to a minute for a Redis that is connected: a request that waited on this one
    // (stopped, so it is disconnected and must be skipped at once) would end past the test's time.
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "down:", REDIS_COMMAND_TIMEOUT_MS: "60000" };
    [first, second] = await Promise.all([startAdapter(stack.workspace.url, environment), startAdapter(stack.workspace.url, environment)]);
  });
  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
    await redis.stop();
  });

  it("answers new questions without waiting on Redis, continues what a replica remembers itself, refuses the rest", async () => {
    const history: Message[] = [{ role: "user", content: "How much annual leave do I get?" }];
    const one = await ask(first.url, history);
    const header = await ask(first.url, [{ role: "user", content: "remote work" }], { "x-conversation-id": "conv-down" });
    const previous = await respond(first.url, { model: "ask", input: "What are the password rules?" });
    const reference = previous.body.output.find((item: { type: string }) => item.type === "message").id as string;
    // The turns are written after delivery: two conversation turns and a stored response.
    const stored = (store: string) => metricSum([first], "adapter_store_writes_total", { store, outcome: "stored" }).then(([count]) => count as number);
    await waitFor(async () => (await stored("conversation")) >= 2 && (await stored("response")) >= 1, "the turns to be written");
    expect((await ask(second.url, [{ role: "user", content: "What about laptops?" }])).status).toBe(200);

    await redis.stop();
    const followUp = [...history, { role: "assistant", content: one.answer }, { role: "user", content: "Does it carry over?" }];
    const createsBefore = creates();
    // The other replica cannot know these conversations: refused, at once, and nothing is created upstream.
    for (const refused of [await ask(second.url, followUp), await ask(second.url, [{ role: "user", content: "and more?" }], { "x-conversation-id": "conv-down" })]) {
      expectRefused(refused, "conversation_unavailable");
    }
    expectRefused(await respond(second.url, { model: "ask", input: "More?", previous_response_id: previous.body.id }), "response_store_unavailable");
    expectRefused(
      await respond(second.url, { model: "ask", input: [{ type: "item_reference", id: reference }, { role: "user", content: "More?" }] }),
      "response_store_unavailable",
    );
    expect(creates()).toBe(createsBefore);

    // A new question is answered, without waiting on Redis.
    expect((await ask(second.url, [{ role: "user", content: "What about laptops?" }])).status).toBe(200);

    // The replica that answered them continues them from its own memory.
    expect((await ask(first.url, followUp)).queryId).toBe(one.queryId);
    expect((await ask(first.url, [{ role: "user", content: "and more?" }], { "x-conversation-id": "conv-down" })).queryId).toBe(header.queryId);
    const chained = await respond(first.url, { model: "ask", input: "More?", previous_response_id: previous.body.id });
    expect(chained.status).toBe(200);
    expect(chained.queryId).toBe(previous.queryId);
  });
});

describeWith(REDIS_SERVERS, "a Redis that hangs", () => {
  it("is waited for up to the command timeout, then skipped at once until it answers again", async () => {
    const redis = await startRedis({ own: true });
    const replica = await startAdapter(stack.workspace.url, { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "hang:", REDIS_COMMAND_TIMEOUT_MS: "400" });
    try {
      const history: Message[] = [{ role: "user", content: "How much annual leave do I get?" }];
      const one = await ask(replica.url, history);
      await waitFor(async () => (await metricSum([replica], "adapter_store_writes_total", { store: "conversation", outcome: "stored" }))[0] === 1, "the turn to be written");
      const followUp = (question: string) => [...history, { role: "assistant", content: one.answer }, { role: "user", content: question }];
      // Not remembered by this replica: only Redis knows it.
      const unknown = [{ role: "user", content: "leave" }, { role: "assistant", content: "An answer from elsewhere." }, { role: "user", content: "more?" }];
      redis.signal("SIGSTOP");
      const waited = performance.now();
      expectRefused(await ask(replica.url, unknown), "conversation_unavailable");
      expect(performance.now() - waited).toBeGreaterThanOrEqual(380); // a slow Redis gets its whole bound
      expectRefused(await ask(replica.url, unknown), "conversation_unavailable");
      // Two bounds in a row with no answer: Redis is down, and commands are skipped at once: not sent, so not
      // timed out. (How many commands timed out by then depends on how many a busy machine had in flight
      // together, which count once: at least the two asks'.)
      const failed = () => metricSum([replica], "adapter_redis_command_duration_seconds", { outcome: "failed" }).then(([count]) => count);
      const failedWhenDown = await failed();
      expect(failedWhenDown).toBeGreaterThanOrEqual(2);
      expectRefused(await ask(replica.url, unknown), "conversation_unavailable");
      expect(await failed()).toBe(failedWhenDown);
      expect((await ask(replica.url, followUp("carry over?"))).queryId).toBe(one.queryId);
      const metrics = await (await fetch(`${replica.url}/metrics`)).text();
      expect(metrics).toMatch(/^adapter_redis_available 0$/m);
      expect(metrics).toMatch(/^adapter_continuations_refused_total\{store="conversation"\} 3$/m);

      redis.signal("SIGCONT");
      // The gate's probe finds it answering again.
      await waitFor(async () => /^adapter_redis_available 1$/m.test(await (await fetch(`${replica.url}/metrics`)).text()), "Redis available again", { intervalMs: 50 });
      const fresh = await ask(replica.url, unknown);
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    } finally {
      redis.signal("SIGCONT");
      await replica.close();
      await redis.stop();
    }
  });
});

describeWith(REDIS_SERVERS, "shared polling, an optimisation", () => {
  it("never holds an answer: with the lease's Redis hung, each poll goes on alone at once", async () => {
    const redis = await startRedis({ own: true });
    // A command may take a minute, past the test's time: an answer that waited for its poll's turn
    // with Redis (the lease) would never come in time. The gate does not know this Redis down yet.
    const replica = await startAdapter(stack.workspace.url, { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "lease:", REDIS_COMMAND_TIMEOUT_MS: "60000" });
    const metric = (name: string, labels: Record<string, string>) => metricSum([replica], name, labels).then(([count]) => count as number);
    // MCP tool calls: answers that nothing else waits on Redis for (no conversation turn to remember, nothing stored).
    const ask = async (question: string) => {
      const response = await fetch(`${replica.url}/mcp`, {
        method: "POST",
        headers: headers({ accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }),
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: { question } } }),
      });
      const body = (await response.json()) as any;
      return { status: response.status, error: body.result?.isError === true, answer: body.result?.structuredContent?.answer as string | undefined };
    };
    try {
      expect(await ask("What are the password rules?")).toMatchObject({ status: 200, error: false, answer: expect.stringMatching(/14 characters/) });
      expect(await metric("adapter_cluster_lease_changes_total", { change: "acquired" })).toBe(1);
      redis.signal("SIGSTOP");
      const answers = await Promise.all([ask("How much annual leave do I get?"), ask("What are the password rules?")]);
      expect(answers).toEqual([expect.objectContaining({ status: 200, error: false }), expect.objectContaining({ status: 200, error: false })]);
      expect(answers[1]?.answer).toMatch(/14 characters/);
      // Polled alone because Redis did not answer at once, not because the gate knew it down.
      expect(await metric("adapter_cluster_fallbacks_total", { reason: "slow_redis" })).toBeGreaterThan(0);
      expect(await metric("adapter_redis_available", {})).toBe(1);
    } finally {
      redis.signal("SIGCONT");
      await replica.close();
      await redis.stop();
    }
  });
});

describeWith(REDIS_SERVERS, "a turn written while Redis is away", () => {
  it("is retried in the background and reaches the other replicas once Redis is back", async () => {
    const redis = await startRedis({ own: true });
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "retry:" };
    const [first, second] = await Promise.all([startAdapter(stack.workspace.url, environment), startAdapter(stack.workspace.url, environment)]);
    let restarted: RedisServer | undefined;
    try {
      await redis.stop();
      const history: Message[] = [{ role: "user", content: "How much annual leave do I get?" }];
      const one = await ask(first.url, history);
      expect(one.status).toBe(200);
      restarted = await startRedis({ port: redis.port });
      // The write is retried (at once when the replica reconnects, else after 0.25, 1.25 and 4.25 s).
      const retried = /^adapter_store_writes_total\{store="conversation",outcome="retried"\} 1$/m;
      await waitFor(async () => retried.test(await (await fetch(`${first.url}/metrics`)).text()), "the turn's write retried");
      // The other replica now knows the turn.
      const followUp = [...history, { role: "assistant", content: one.answer }, { role: "user", content: "Does it carry over?" }];
      const two = await ask(second.url, followUp);
      expect(two.status, JSON.stringify(two.body)).toBe(200);
      expect(two.queryId).toBe(one.queryId);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await restarted?.stop();
    }
  });
});
