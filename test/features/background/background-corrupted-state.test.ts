import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { redisKeys } from "../../../src/redis/keys.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// A background answer whose replica is gone is taken over from the state its record keeps in Redis
// (docs/responses-api.md#background-mode). That state is read back parsed, never trusted: a record
// whose state does not parse is refused, and the answer ends failed, saying why, rather than being
// followed with whatever the record says.

const sdk = (adapter: RunningAdapter) =>
  new OpenAI({ baseURL: `${adapter.url}/v1`, apiKey: API_KEY, defaultHeaders: { "service-workspace": "acme" }, maxRetries: 0 });

describeWith(REDIS, "a background answer whose stored state is corrupted", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let starter: RunningAdapter;
  let survivor: RunningAdapter;
  const prefix = `corrupted-takeover-${process.pid}:`;

  beforeAll(async () => {
    redis = await startRedis();
    // Slow: the answer still runs when the replica that started it stops.
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 5000 });
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix };
    [starter, survivor] = await Promise.all([startAdapter(workspace.url, environment), startAdapter(workspace.url, environment)]);
  });
  afterAll(async () => {
    await Promise.all([starter?.close(), survivor?.close()]);
    await workspace?.close();
    await redis?.stop();
  });

  it("is refused on takeover: it ends failed, and nothing follows its query", async () => {
    const created = await sdk(starter).responses.create({ model: "reason", input: "How much annual leave do I get?", background: true });
    await waitFor(() => starter.adapter.watcher.waitingQueries === 1, "the query to be followed");
    // The replica goes away (it hands its answers over, their leases left to run out).
    await starter.close();
    const keys = redisKeys(prefix);
    const recordKey = keys.background(created.id, "record");
    const record = JSON.parse((await redis.client.get(recordKey)) as string);
    expect(record.resume).toMatchObject({ mode: "reason", prompt: "How much annual leave do I get?" });
    // A record whose envelope is sound but whose state is not what a replica wrote.
    await redis.client.set(recordKey, JSON.stringify({ ...record, resume: { ...record.resume, mode: "hack", prompt: 42 } }), "KEEPTTL");
    await redis.client.del(keys.background(created.id, "lease"));

    let final: any;
    await waitFor(async () => {
      final = await sdk(survivor).responses.retrieve(created.id);
      return final.status !== "in_progress";
    }, "the response to end");
    expect(final.status).toBe("failed");
    expect(final.error.message).toContain("could not be carried on after its replica stopped: its stored state does not parse");
    expect(survivor.adapter.continuity.background.inFlight).toBe(0);
    expect(survivor.adapter.watcher.waitingQueries).toBe(0);
    const events: any[] = [];
    for await (const event of await sdk(survivor).responses.retrieve(created.id, { stream: true })) events.push(event);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const types = events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types.at(-1)).toBe("response.failed");
    expect(types).not.toContain("response.completed");
  }, 60_000);
});
