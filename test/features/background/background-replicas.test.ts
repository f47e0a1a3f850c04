import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { until } from "../../helpers/redis-topologies.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

// Background responses shared by two replicas through a real redis-server
// (docs/responses-api.md#background-mode): made on one, retrieved, cancelled and resumed on the other.

const sdk = (adapter: RunningAdapter) =>
  new OpenAI({ baseURL: `${adapter.url}/v1`, apiKey: API_KEY, defaultHeaders: { "service-workspace": "acme" }, maxRetries: 0 });

describeWith(REDIS, "background responses across two replicas", () => {
  let redis: RedisServer;
  let fast: RunningWorkspace;
  let slow: RunningWorkspace;
  const adapters: RunningAdapter[] = [];
  let one: RunningAdapter;
  let other: RunningAdapter;
  let slowOne: RunningAdapter;
  let slowOther: RunningAdapter;

  beforeAll(async () => {
    redis = await startRedis();
    const workspace = (stepDelayMs: number) =>
      startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY, "sk-other-key"], stepDelayMs });
    [fast, slow] = await Promise.all([workspace(40), workspace(5000)]);
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `background-test-${process.pid}:` };
    adapters.push(...(await Promise.all([fast, fast, slow, slow].map((upstream) => startAdapter(upstream.url, environment)))));
    [one, other, slowOne, slowOther] = adapters as [RunningAdapter, RunningAdapter, RunningAdapter, RunningAdapter];
  });
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await Promise.all([fast?.close(), slow?.close()]);
    await redis?.stop();
  });

  it("is created on one replica and retrieved on the other until completed, then continued there", async () => {
    const created = await sdk(one).responses.create({ model: "reason", input: "How much annual leave do I get?", background: true });
    expect(created.status).toBe("in_progress");
    let done: any;
    await until(async () => {
      done = await sdk(other).responses.retrieve(created.id);
      return done.status !== "in_progress";
    }, "the response to end on the other replica");
    expect(done.status).toBe("completed");
    expect(done.output_text).toContain("25 days");
    const next = await sdk(other).responses.create({ model: "ask", input: "Does it carry over?", previous_response_id: created.id });
    expect(next.status).toBe("completed");
  });

  it("is cancelled on the other replica: the replica that runs it stops waiting for the query", async () => {
    const created = await sdk(slowOne).responses.create({ model: "build", input: "How much annual leave do I get?", background: true });
    await until(async () => slowOne.adapter.watcher.waitingQueries === 1, "the query to be followed");
    const cancelled = await sdk(slowOther).responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    await until(async () => slowOne.adapter.watcher.waitingQueries === 0, "the first replica to stop waiting");
    expect((await sdk(slowOne).responses.retrieve(created.id)).status).toBe("cancelled");
  });

  it("streams on one replica, broken after a few events, resumed on the other with starting_after", async () => {
    const stream = await sdk(one).responses.create({ model: "reason", input: "How much annual leave do I get?", background: true, stream: true });
    const first: any[] = [];
    for await (const event of stream) {
      first.push(event);
      if (first.length === 3) break;
    }
    const id = first[0].response.id;
    const rest: any[] = [];
    for await (const event of await sdk(other).responses.retrieve(id, { stream: true, starting_after: first.at(-1).sequence_number })) rest.push(event);
    const all = [...first, ...rest];
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    expect(all.at(-1).type).toBe("response.completed");
    const text = all.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
    expect(all.at(-1).response.output.at(-1).content[0].text).toBe(text);
    expect(text).toContain("25 days");
  });

  it("is visible to no other key on any replica", async () => {
    const created = await sdk(one).responses.create({ model: "ask", input: "How much annual leave do I get?", background: true });
    const foreign = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: "sk-other-key", defaultHeaders: { "service-workspace": "acme" }, maxRetries: 0 });
    await expect(foreign.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(foreign.responses.cancel(created.id)).rejects.toMatchObject({ status: 404 });
  });
});
