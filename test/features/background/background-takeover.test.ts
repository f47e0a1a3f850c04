import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { until } from "../../helpers/redis-topologies.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { API_KEY, FIXTURE_DOCUMENTS } from "../../helpers/start-stack.js";

// A replica SIGKILLed during a background answer (docs/responses-api.md#background-mode): the
// workspace query goes on upstream, and the other replica, asked for the response once the dead
// one's lease ran out, follows the query from where the event log stops and completes it.

const sdk = (replica: Replica) =>
  new OpenAI({ baseURL: `${replica.url}/v1`, apiKey: API_KEY, defaultHeaders: { "service-workspace": "acme" }, maxRetries: 0 });

describeWith(REDIS, "a background answer whose replica dies", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let replicas: Replica[] = [];
  let environment: Record<string, string> = {};
  beforeAll(async () => {
    redis = await startRedis();
    // Slow enough that the answer is still running when its replica is killed.
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 500 });
    environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `takeover-${process.pid}:`, DEFAULT_WORKSPACE: "acme", POLL_INTERVAL_MIN_MS: "50", POLL_INTERVAL_MAX_MS: "200" };
    replicas = await Promise.all([startReplica(workspace.url, environment), startReplica(workspace.url, environment)]);
  }, 60_000);
  afterAll(async () => {
    await stopAll(replicas);
    await workspace?.close();
    await redis?.stop();
  });

  it("is completed by the other replica, following the same query, its events numbered without a gap or a repeat", async () => {
    const [doomed, survivor] = replicas as [Replica, Replica];
    const stream = await sdk(doomed).responses.create({ model: "reason", input: "How much annual leave do I get?", background: true, stream: true });
    let id = "";
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.reasoning_summary_text.delta") break;
    }
    doomed.child.kill("SIGKILL");
    await new Promise((resolve) => doomed.child.once("exit", resolve));
    let final: any;
    await until(async () => {
      final = await sdk(survivor).responses.retrieve(id);
      return final.status !== "in_progress";
    }, "the other replica to complete the answer", 60_000);
    expect(final.status).toBe("completed");
    expect(final.output_text).toContain("25 days");
    const events: any[] = [];
    for await (const event of await sdk(survivor).responses.retrieve(id, { stream: true })) events.push(event);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.at(-1).type).toBe("response.completed");
    const text = events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
    expect(text).toBe(final.output_text);
    const reasoning = events.filter((event) => event.type === "response.reasoning_summary_text.delta").map((event) => event.delta).join("");
    expect(final.output[0].summary[0].text).toBe(reasoning);
    // One workspace query, created once: the survivor followed it, it did not ask again.
    expect(workspace.control.creates).toHaveLength(1);
  }, 90_000);

  it("is handed over by a replica that shuts down gracefully (SIGTERM), not failed by its shutdown", async () => {
    const leaving = await startReplica(workspace.url, environment);
    replicas.push(leaving);
    const survivor = replicas[1] as Replica;
    const before = workspace.control.creates.length;
    const stream = await sdk(leaving).responses.create({ model: "reason", input: "How much annual leave do I get?", background: true, stream: true });
    let id = "";
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.reasoning_summary_text.delta") break;
    }
    leaving.child.kill("SIGTERM");
    expect(await new Promise((resolve) => leaving.child.once("exit", (code) => resolve(code)))).toBe(0);
    let final: any;
    await until(async () => {
      final = await sdk(survivor).responses.retrieve(id);
      return final.status !== "in_progress";
    }, "the other replica to complete the answer", 60_000);
    expect(final.status).toBe("completed");
    expect(final.output_text).toContain("25 days");
    const events: any[] = [];
    for await (const event of await sdk(survivor).responses.retrieve(id, { stream: true })) events.push(event);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.map((event) => event.type).filter((type) => type === "response.failed")).toEqual([]);
    expect(workspace.control.creates.length - before).toBe(1);
  }, 90_000);
});
