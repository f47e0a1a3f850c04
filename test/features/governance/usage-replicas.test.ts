import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { namedPrincipal } from "../../../src/auth/account.js";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { groupTag, redisKeys } from "../../../src/redis/keys.js";
import { type Clock, systemClock } from "../../../src/util/clock.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { ADMIN_KEY, BARE_KEY, chatAnswer, listedKeys, mcpAnswer, readUsage, responseAnswer, samples, SENDERS, type Sender, type Spent, sumsByGroup, sumsOf } from "../../helpers/governance.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { API_KEY, FIXTURE_DOCUMENTS, headers, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/governance.md, issue 45's "done when": two named keys and a gateway key with two identities
// send answers through chat, Responses, MCP and a background response across two replicas on a real
// redis-server; the usage endpoint's sums equal the usage the answers returned per key, identity,
// workspace, mode and day; a daily quota holds across both and resets at the day's end.
const { search: SEARCH, legal: LEGAL, alice: ALICE, bob: BOB } = SENDERS;
const KEYS = listedKeys(API_KEY);

/** The adapters' clock: the real one moved by `offsetMs` (its timers are the real ones), so that a test crosses midnight without waiting. */
function movableClock(): Clock & { offsetMs: number } {
  const clock = { ...systemClock, offsetMs: 0, now: () => Date.now() + clock.offsetMs };
  return clock;
}

/** The offset that puts `clock` at `hour:minute` UTC of the next day. */
function offsetTo(hour: number, minute: number): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, hour, minute) - Date.now();
}

describeWith(REDIS, "usage and quotas across two replicas on Redis", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let prefixes = 0;

  async function replicas(environment: Record<string, string>, clock: Clock): Promise<[RunningAdapter, RunningAdapter, string]> {
    const prefix = `governance-${process.pid}-${(prefixes += 1)}:`;
    const start = () =>
      startAdapter(workspace.url, { ...KEYS, REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: "5000", REALTIME: "off", ...environment }, pino({ level: "silent" }), { clock });
    const [first, second] = await Promise.all([start(), start()]);
    return [first, second, prefix];
  }

  beforeAll(async () => {
    redis = await startRedis();
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme", "globex"], apiKeys: [API_KEY], stepDelayMs: 5 });
  });
  afterAll(async () => {
    await workspace?.close();
    await redis?.stop();
  });

  it("sums the usage the answers returned, per key, identity, workspace, mode and day, the same on both replicas", async () => {
    const clock = movableClock();
    clock.offsetMs = offsetTo(10, 0);
    const folder = mkdtempSync(join(tmpdir(), "adapter-audit-"));
    const audits = [join(folder, "first.jsonl"), join(folder, "second.jsonl")];
    const prefix = `governance-${process.pid}-${(prefixes += 1)}:`;
    const environment = { ...KEYS, REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: "5000", REALTIME: "off" };
    const adapters = await Promise.all(audits.map((file) => startAdapter(workspace.url, { ...environment, AUDIT_LOG: file }, pino({ level: "silent" }), { clock })));
    const [first, second] = adapters as [RunningAdapter, RunningAdapter];
    try {
      const spent: (Spent & { day: string })[] = [];
      const day = () => new Date(clock.now()).toISOString().slice(0, 10);
      const everySurface = async (sender: Sender, index: number) => {
        const [one, other] = index % 2 ? [second, first] : [first, second];
        const place = index % 2 ? "globex" : "acme";
        const answers = [
          await chatAnswer(one.url, sender, place, "How much annual leave do I get?", false),
          await chatAnswer(other.url, sender, "acme", "What is the travel policy?", true),
          await responseAnswer(one.url, sender, place, "What is the travel policy?", "reason", false),
          await mcpAnswer(other.url, sender, place, "How much annual leave do I get?"),
          await responseAnswer(one.url, sender, "acme", "How much annual leave do I get?", "ask", true),
        ];
        spent.push(...answers.map((answer) => ({ ...answer, day: day() })));
      };
      const senders = [SEARCH, LEGAL, ALICE, BOB];
      for (const [index, sender] of senders.entries()) await everySurface(sender, index);
      // The next day (UTC): a second bucket.
      clock.offsetMs += 86_400_000;
      for (const [index, sender] of senders.entries()) await everySurface(sender, index + 1);
      // The identity header from a key that is not a gateway's is ignored: the answer is the key's.
      const ignored = await chatAnswer(second.url, { ...LEGAL, headers: ALICE.headers }, "acme", "What is the travel policy?", false);
      spent.push({ ...ignored, day: day() });

      const start = Math.floor((clock.now() - 2 * 86_400_000) / 1000);
      const query = `start_time=${start}&end_time=${start + 4 * 86_400}&group_by=api_key_id,project_id,model`;
      const byDay = (page: { data: { start_time: number; results: unknown[] }[] }) =>
        new Map(page.data.map((bucket) => [new Date(bucket.start_time * 1000).toISOString().slice(0, 10), sumsByGroup({ data: [bucket] as never })]));
      const expected = new Map([...new Set(spent.map((answer) => answer.day))].map((name) => [name, sumsOf(spent.filter((answer) => answer.day === name))]));
      const same = (page: { data: never[] }) => [...expected].every(([name, sums]) => JSON.stringify([...(byDay(page).get(name) ?? [])].sort()) === JSON.stringify([...sums].sort()));
      for (const adapter of [first, second]) {
        const page = await waitFor(async () => {
          const read = await readUsage(adapter.url, ADMIN_KEY, query);
          return same(read.body) ? read.body : undefined;
        }, "the usage endpoint's sums per day to equal the answers' usage").catch(async () => {
          const read = await readUsage(adapter.url, ADMIN_KEY, query);
          expect(Object.fromEntries([...byDay(read.body)].map(([name, sums]) => [name, Object.fromEntries(sums)]))).toEqual(
            Object.fromEntries([...expected].map(([name, sums]) => [name, Object.fromEntries(sums)])),
          );
          throw new Error("unreachable");
        });
        expect(expected.size).toBe(2);
        expect(new Set([...sumsByGroup(page).keys()].map((name) => name.split(" ")[0]))).toEqual(new Set(["team-search", "team-legal", "litellm/alice", "litellm/bob"]));
      }

      // Prometheus, over both replicas: the named keys and the gateway as labels; nothing else.
      const answersByKey = new Map<string, number>();
      for (const adapter of [first, second]) {
        for (const [labels, value] of await samples(adapter.url, "adapter_answers_total")) {
          const key = /key="([^"]*)"/.exec(labels)?.[1] as string;
          answersByKey.set(key, (answersByKey.get(key) ?? 0) + value);
        }
      }
      expect(Object.fromEntries(answersByKey)).toEqual({ "team-search": 10, "team-legal": 11, litellm: 20 });

      // One audit record per answer over both replicas, no text, no key.
      const records = await waitFor(() => {
        const lines = audits.flatMap((file) => readFileSync(file, "utf8").split("\n").filter(Boolean));
        return lines.length >= spent.length ? lines.map((line) => JSON.parse(line) as Record<string, any>) : undefined;
      }, "an audit record per answer");
      expect(records).toHaveLength(spent.length);
      const text = audits.map((file) => readFileSync(file, "utf8")).join("");
      for (const key of [SEARCH.key, LEGAL.key, ALICE.key, BARE_KEY, ADMIN_KEY, API_KEY]) expect(text).not.toContain(key);
      expect(text).not.toMatch(/annual leave|travel policy/i);
      expect(records.filter((record) => record.background)).toHaveLength(8);
      expect(records.every((record) => record.completed && record.tokens)).toBe(true);
    } finally {
      await Promise.all(adapters.map((adapter) => adapter.close()));
    }
  });

  it("refuses a key's next answer on both replicas once its day's quota is reached, in MCP's shape too, and lets it in again once the UTC day ends", async () => {
    const clock = movableClock();
    clock.offsetMs = offsetTo(23, 50);
    // An answer expected at one token: each request reserves its question's 8 tokens and 1.
    const [first, second, prefix] = await replicas({ RATE_LIMIT_TPD: "400", RATE_LIMIT_ANSWER_TOKENS: "ask:1" }, clock);
    const reserved = 9;
    try {
      const counter = () => {
        const name = redisKeys(prefix).limitQuota(groupTag(namedPrincipal("key", "team-search"), "acme"), `tpd:${new Date(clock.now()).toISOString().slice(0, 10)}`);
        return redis.client.get(name).then(Number);
      };
      let charged = 0;
      let index = 0;
      while (charged + reserved <= 400) {
        const answer = await chatAnswer((index++ % 2 ? second : first).url, SEARCH, "acme", "How much annual leave do I get?", false);
        charged += answer.input + answer.output;
        await waitFor(async () => (await counter()) === charged, "the answer's tokens in the day's shared count");
      }
      const refusals = await Promise.all(
        [first, second].map((adapter) =>
          fetch(`${adapter.url}/v1/chat/completions`, {
            method: "POST",
            headers: headers({ authorization: `Bearer ${SEARCH.key}` }),
            body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do I get?" }] }),
          }),
        ),
      );
      for (const refused of refusals) {
        expect(refused.status).toBe(429);
        expect(refused.headers.get("x-ratelimit-limit-tokens")).toBe("400");
        expect(refused.headers.get("x-ratelimit-remaining-tokens")).toBe(String(Math.max(0, 400 - charged)));
        expect(refused.headers.get("x-ratelimit-reset-tokens")).toMatch(/^(9|10)m[\d.]+s$/);
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(500);
        expect(Number(refused.headers.get("retry-after-ms"))).toBeGreaterThan(500_000);
        // The error body every refusal has: FastAPI's `detail` and OpenAI's `error`, which the SDKs raise as a RateLimitError.
        const body = (await refused.json()) as { detail: string; error: Record<string, unknown> };
        expect(body.detail).toMatch(/tokens per day \(TPD\): limit 400/);
        expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded", message: body.detail });
      }
      const mcp = await fetch(`${second.url}/mcp`, {
        method: "POST",
        headers: headers({ authorization: `Bearer ${SEARCH.key}`, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" }),
        body: JSON.stringify({ jsonrpc: "2.0", id: "over", method: "tools/call", params: { name: "ask", arguments: { question: "How much annual leave do I get?" } } }),
      });
      expect(mcp.status).toBe(429);
      expect(Number(mcp.headers.get("retry-after"))).toBeGreaterThan(500);
      expect(await mcp.json()).toMatchObject({ jsonrpc: "2.0", id: "over", error: { data: { type: "rate_limit_error", code: "rate_limit_exceeded" } } });
      // Another key has its own quota.
      expect((await chatAnswer(first.url, LEGAL, "acme", "What is the travel policy?", false)).account).toBe("team-legal");
      // Past midnight (UTC), a new day: both replicas let the key in again.
      clock.offsetMs += 11 * 60_000;
      for (const adapter of [first, second]) {
        const answer = await chatAnswer(adapter.url, SEARCH, "acme", "How much annual leave do I get?", false);
        expect(answer.input).toBeGreaterThan(0);
      }
    } finally {
      await Promise.all([first, second].map((adapter) => adapter.close()));
    }
  });
});
