import { CreateTaskResultV1Schema } from "@modelcontextprotocol/ext-tasks/core/v1";
import { Client } from "mcp-sdk-v1/client/index.js";
import { StreamableHTTPClientTransport } from "mcp-sdk-v1/client/streamableHttp.js";
import { CallToolResultSchema } from "mcp-sdk-v1/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialHash } from "../../../src/auth/credential-hash.js";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { groupTag, redisKeys } from "../../../src/redis/keys.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { replayedPrompts } from "../../helpers/chat-ui-prompts.js";
import { countedTokens, readUsage } from "../../helpers/governance.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { API_KEY, FIXTURE_DOCUMENTS, headers, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/rate-limits.md#reservations (issue 56, the security review's M2): a token quota bounds the
// work the workspace is asked for, not only what is charged after it. Admission reserves each
// answer's expected cost, so concurrent requests cannot together pass the quota; an answer whose
// client leaves is charged for what the workspace was asked and produced.

const ADMIN_KEY = "sk-admin-quotas";
/** Who the pass-through test key is in usage (docs/governance.md#who-asks). */
const ACCOUNT = `key:${credentialHash(API_KEY).slice(0, 12)}`;
/** A question with some context, as a client sends one: about a hundred tokens. */
const QUESTION =
  "We are updating the onboarding guide for the support team and want it to be accurate. " +
  "Several people have asked what happens after a laptop is lost or a phishing mail is clicked, " +
  "who must be told, through which channel, and how fast. How are security incidents reported?";

/** What one answer to QUESTION in mode `reason` costs, as a client is told: its prompt, its completion, both. */
interface AnswerCost {
  prompt: number;
  completion: number;
  total: number;
}

/** A chat answer to QUESTION in mode `reason`, as JSON: status, headers, body. */
async function ask(url: string, extra: Record<string, unknown> = {}) {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({ model: "reason", messages: [{ role: "user", content: QUESTION }], ...extra }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

/** The settings under which a quota holds `answers` answers of `cost`, and an answer is expected at its real size. */
function quotaOf(cost: AnswerCost, answers: number): Record<string, string> {
  return { RATE_LIMIT_TPD: String(answers * cost.total), RATE_LIMIT_ANSWER_TOKENS: `reason:${cost.completion}`, ADMIN_API_KEYS: `ops=${ADMIN_KEY}` };
}

/** Twelve concurrent answers over `urls` in turn: what each got, the queries the workspace was asked for, and the tokens of those answered. */
async function twelveAtOnce(urls: string[], workspace: RunningWorkspace) {
  const before = workspace.control.creates.length;
  const results = await Promise.all(Array.from({ length: 12 }, (_, index) => ask(urls[index % urls.length] as string)));
  const answered = results.filter((result) => result.status === 200);
  const refused = results.filter((result) => result.status !== 200);
  for (const refusal of refused) {
    expect(refusal.status).toBe(429);
    expect(Number(refusal.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refusal.body).toMatchObject({ detail: expect.stringMatching(/tokens per day \(TPD\)/), error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });
  }
  const charged = answered.reduce((sum, result) => sum + Number(result.body.usage.total_tokens), 0);
  return { answered: answered.length, refused: refused.length, asked: workspace.control.creates.length - before, charged };
}

/** The usage of the test key in workspace `acme` today, as the usage endpoint sums it. */
async function usageOf(url: string): Promise<{ input: number; output: number; requests: number }> {
  const start = Math.floor(Date.now() / 1000) - 120;
  const page = await readUsage(url, ADMIN_KEY, `start_time=${start}&group_by=api_key_id&api_key_ids=${encodeURIComponent(ACCOUNT)}`);
  const results = page.body.data.flatMap((bucket: { results: any[] }) => bucket.results);
  return {
    input: results.reduce((sum: number, result: any) => sum + result.input_tokens, 0),
    output: results.reduce((sum: number, result: any) => sum + result.output_tokens, 0),
    requests: results.reduce((sum: number, result: any) => sum + result.num_model_requests, 0),
  };
}

/** The usage of the test key once it counts `answers` answers (each charge lands as its answer ends). */
function usageOfAnswers(url: string, answers: number) {
  return waitFor(async () => {
    const read = await usageOf(url);
    return read.requests === answers ? read : undefined;
  }, `the usage of ${answers} answers`);
}

/** Opens a streamed answer and leaves after its first 300 bytes: its status, and whether it was left mid-answer. */
async function abandonAfter300Bytes(url: string): Promise<{ status: number; leftMidAnswer: boolean }> {
  const controller = new AbortController();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({ model: "reason", stream: true, messages: [{ role: "user", content: QUESTION }] }),
    signal: controller.signal,
  });
  if (response.status !== 200) {
    await response.arrayBuffer();
    return { status: response.status, leftMidAnswer: false };
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (text.length < 300) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  controller.abort();
  await reader.cancel().catch(() => undefined);
  return { status: response.status, leftMidAnswer: !text.includes("[DONE]") };
}

/** The workspace and what one answer costs there, measured through an adapter without limits. */
async function workspaceAndCost(): Promise<{ workspace: RunningWorkspace; cost: AnswerCost }> {
  // Steps slow enough that twelve answers run at once, and that a stream is left mid-answer.
  const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 150 });
  const probe = await startAdapter(workspace.url);
  try {
    const { body } = await ask(probe.url);
    const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = body.usage;
    return { workspace, cost: { prompt, completion, total } };
  } finally {
    await probe.close();
  }
}

describeWith(REDIS, "token quotas bound the workspace's work, across two replica processes on one Redis", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let cost: AnswerCost;
  let prefixes = 0;
  const started: Replica[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    ({ workspace, cost } = await workspaceAndCost());
  });
  afterAll(async () => {
    await stopAll(started);
    await workspace?.close();
    await redis?.stop();
  });

  /** Two replica processes sharing one Redis under a prefix of their own. */
  async function replicas(environment: Record<string, string>): Promise<{ urls: string[]; prefix: string }> {
    const prefix = `quotas-${process.pid}-${(prefixes += 1)}:`;
    const both = await Promise.all([0, 1].map(() => startReplica(workspace.url, { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, REALTIME: "off", ...environment })));
    started.push(...both);
    return { urls: both.map((replica) => replica.url), prefix };
  }

  it("answers at most five of twelve concurrent requests against a quota of three answers, asks the workspace nothing for the others, and charges at most two answers past the quota", async () => {
    const quota = 3 * cost.total;
    const { urls, prefix } = await replicas(quotaOf(cost, 3));
    const outcome = await twelveAtOnce(urls, workspace);
    expect(outcome.answered, JSON.stringify(outcome)).toBeGreaterThanOrEqual(1);
    expect(outcome.answered, JSON.stringify(outcome)).toBeLessThanOrEqual(5);
    expect(outcome.asked).toBe(outcome.answered);
    // Every reservation settled to the answers' own usage: the day's shared count is what they reported.
    const day = new Date().toISOString().slice(0, 10);
    const count = redisKeys(prefix).limitQuota(groupTag(credentialHash(API_KEY), "acme"), `tpd:${day}`);
    await waitFor(async () => Number(await redis.client.get(count)) === outcome.charged, `the day's count to settle at ${outcome.charged}`);
    expect(outcome.charged).toBeLessThanOrEqual(quota + 2 * cost.total);
    const usage = await usageOfAnswers(urls[0] as string, outcome.answered);
    expect(usage.input + usage.output).toBe(outcome.charged);
    // The quota spent, the next request is refused on either replica before anything is asked.
    expect((await ask(urls[1] as string)).status).toBe(429);
  });

  it("charges each stream its client leaves after 300 bytes for its prompt and at least the answer expected of its mode, so that the quota ends them", async () => {
    const { urls } = await replicas(quotaOf(cost, 4));
    const before = workspace.control.creates.length;
    const streams = [];
    for (let index = 0; index < 8; index += 1) streams.push(await abandonAfter300Bytes(urls[index % 2] as string));
    const admitted = streams.filter((stream) => stream.status === 200);
    expect(admitted.every((stream) => stream.leftMidAnswer)).toBe(true);
    expect(streams.filter((stream) => stream.status === 429).length).toBeGreaterThanOrEqual(3);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    expect(workspace.control.creates.length - before).toBe(admitted.length);
    // Each is charged: its prompt as the answer would count it, and the answer the mode is expected to produce.
    const usage = await usageOfAnswers(urls[1] as string, admitted.length);
    expect(usage.input).toBe(admitted.length * countedTokens(QUESTION, "", "").input);
    expect(usage.output).toBeGreaterThanOrEqual(admitted.length * cost.completion);
    expect((await ask(urls[0] as string)).status).toBe(429);
  });
});

describe("token quotas bound the workspace's work in one process, without Redis; a background answer and an MCP task hold their reservation until they end", () => {
  let workspace: RunningWorkspace;
  let cost: AnswerCost;
  beforeAll(async () => {
    ({ workspace, cost } = await workspaceAndCost());
  });
  afterAll(() => workspace?.close());

  it("answers at most five of twelve concurrent requests against a quota of three answers, and charges at most two answers past it", async () => {
    const adapter = await startAdapter(workspace.url, quotaOf(cost, 3));
    try {
      const outcome = await twelveAtOnce([adapter.url], workspace);
      expect(outcome.answered, JSON.stringify(outcome)).toBeGreaterThanOrEqual(1);
      expect(outcome.answered, JSON.stringify(outcome)).toBeLessThanOrEqual(5);
      expect(outcome.asked).toBe(outcome.answered);
      expect(outcome.charged).toBeLessThanOrEqual(5 * cost.total);
      const usage = await usageOfAnswers(adapter.url, outcome.answered);
      expect(usage.input + usage.output).toBe(outcome.charged);
      expect((await ask(adapter.url)).status).toBe(429);
    } finally {
      await adapter.close();
    }
  });

  /** What admission reserves for QUESTION in mode `reason`: its UTF-8 size in fours, and the answer expected. */
  const reservation = () => Math.ceil(Buffer.byteLength(QUESTION) / 4) + cost.completion;
  /** The tokens a refusal says are used (`…: limit L, used U, requested R`). */
  const usedIn = (refusal: { body: any }) => Number(/used (\d+), requested/.exec(refusal.body.detail)?.[1]);

  /** An adapter whose daily quota holds one reservation and a half: a second answer never fits beside a first. */
  async function oneAtATime() {
    const quota = Math.floor(1.5 * reservation());
    return startAdapter(workspace.url, { RATE_LIMIT_TPD: String(quota), RATE_LIMIT_ANSWER_TOKENS: `reason:${cost.completion}`, MCP_TASK_POLL_INTERVAL_MS: "100" });
  }

  it("gives the reservation back of a request that asks the workspace nothing (refused after admission, or its query refused), and reserves nothing for a chat UI's housekeeping", async () => {
    const adapter = await oneAtATime();
    try {
      // Admitted, then refused by the plan (a create field the adapter sets itself): nothing asked, nothing kept.
      const before = workspace.control.creates.length;
      expect((await ask(adapter.url, { query: { content: "mine" } })).status).toBe(422);
      expect((await ask(adapter.url, { query: { content: "mine" } })).status).toBe(422);
      // Asked, but the workspace refused to create the query: settled to nothing.
      workspace.control.inject({ on: "create", kind: "status", status: 400, times: 2 });
      expect((await ask(adapter.url)).status).toBe(502);
      expect((await ask(adapter.url)).status).toBe(502);
      expect(workspace.control.creates.length).toBe(before);
      const answered = await ask(adapter.url);
      expect(answered.status).toBe(200);
      expect(Number(answered.headers.get("x-ratelimit-remaining-tokens"))).toBe(Math.floor(1.5 * reservation()) - reservation());
      // The quota now holds less than a reservation: an answer is refused, the UI's title request is answered by the adapter.
      expect((await ask(adapter.url)).status).toBe(429);
      const title = replayedPrompts([{ role: "user", content: QUESTION }, { role: "assistant", content: "Within one hour." }], "chat-1").find((each) => each.kind === "title");
      if (!title) throw new Error("no title prompt");
      const housekeeping = await fetch(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers: headers(title.conversationHeader),
        body: JSON.stringify({ model: "reason", messages: title.messages, ...title.extra }),
      });
      expect(housekeeping.status).toBe(200);
      expect(housekeeping.headers.get("service-chat-ui-task")).toBeTruthy();
      expect(workspace.control.creates.length).toBe(before + 1);
    } finally {
      await adapter.close();
    }
  });

  it("a background response: its reservation refuses the next request while it runs, and becomes its usage when it ends", async () => {
    const adapter = await oneAtATime();
    try {
      const created = await fetch(`${adapter.url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "reason", input: QUESTION, background: true }) });
      const response = (await created.json()) as { id: string; status: string };
      expect(response.status).toBe("in_progress");
      // Its request has ended; its answer runs on, and holds its reservation.
      const refused = await ask(adapter.url);
      expect(refused.status).toBe(429);
      expect(usedIn(refused)).toBe(reservation());
      const done = await waitFor(async () => {
        const read = (await (await fetch(`${adapter.url}/v1/responses/${response.id}`, { headers: headers() })).json()) as any;
        return read.status === "completed" ? read : undefined;
      }, "the background answer to complete");
      const used = done.usage.input_tokens + done.usage.output_tokens;
      await waitFor(async () => usedIn(await ask(adapter.url)) === used, "the reservation settled to the answer's usage");
    } finally {
      await adapter.close();
    }
  });

  it("an MCP task: its reservation refuses the next call while it runs, and becomes its usage when it ends", async () => {
    const adapter = await oneAtATime();
    const client = new Client({ name: "quota-test", version: "1.0.0" });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(`${adapter.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" } } });
      await client.connect(transport);
      const created = (await client.request(
        { method: "tools/call", params: { name: "reason", arguments: { question: QUESTION }, task: {} } },
        CreateTaskResultV1Schema as any,
      )) as any;
      const taskId = created.task.taskId as string;
      const refused = await ask(adapter.url);
      expect(refused.status).toBe(429);
      expect(usedIn(refused)).toBe(reservation());
      const result = (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as any;
      expect(result.structuredContent.mode).toBe("reason");
      // The task's usage (a tool result reports none) is less than its reservation here: the count comes down to it.
      await waitFor(async () => {
        const seen = usedIn(await ask(adapter.url));
        return seen > 0 && seen < reservation() ? seen : undefined;
      }, "the reservation settled to the task's usage");
    } finally {
      await client.close();
      await adapter.close();
    }
  });
});
