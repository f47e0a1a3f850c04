import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { metricSum } from "../../helpers/failover-scenario.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { API_KEY, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const workspaceHeaders = { "Service-Workspace": "acme" };
const openaiClient = (url = stack.url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, defaultHeaders: workspaceHeaders, maxRetries: 0 });

describe("the Vercel AI SDK's OpenAI provider (Responses API)", () => {
  const provider = () => createOpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, headers: workspaceHeaders });

  it("generates text with the citations as url sources, and continues by item_reference", async () => {
    const openai = provider();
    const before = stack.workspace.control.creates.length;
    const first = await generateText({ model: openai("ask"), prompt: "How much annual leave do I get?" });
    expect(first.text).toContain("25 days");
    expect(first.sources.length).toBeGreaterThan(0);
    expect(first.sources[0]).toMatchObject({ sourceType: "url", url: "urn:workspace-document:acme:handbook.md" });
    const second = await generateText({
      model: openai("ask"),
      messages: [
        { role: "user", content: "How much annual leave do I get?" },
        ...first.response.messages,
        { role: "user", content: "Does unused leave carry over?" },
      ],
    });
    expect(second.text.length).toBeGreaterThan(0);
    // Both turns are one upstream query...
    const [one, two] = stack.workspace.control.creates.slice(before).map((entry) => entry.body.id);
    expect(two).toBe(one);
    // ...because the second sent the first's output as an item_reference, which the adapter resolved.
    const firstMessage = (await openaiClient().responses.retrieve(first.response.id)).output.find((item) => item.type === "message");
    const items = [];
    for await (const item of openaiClient().responses.inputItems.list(second.response.id, { order: "asc" })) items.push(item);
    expect(items.map((item) => item.id)).toContain(firstMessage?.id);
    // Asked for file_citation, the same answer's citations are document sources (docs/citations.md#the-responses-api).
    const files = createOpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, headers: { ...workspaceHeaders, "X-Responses-Annotations": "file_citation" } });
    const asFiles = await generateText({ model: files("ask"), prompt: "How much annual leave do I get?" });
    expect(asFiles.sources[0]).toMatchObject({ sourceType: "document", title: "handbook.md" });
  });

  it("streams text, reasoning and sources", async () => {
    const result = streamText({ model: provider()("reason"), prompt: "How much annual leave do I get?" });
    let text = "";
    for await (const part of result.textStream) text += part;
    expect(text).toContain("25 days");
    expect((await result.sources).length).toBeGreaterThan(0);
    expect(await result.reasoningText).toContain("search_documents");
    expect((await result.usage).inputTokens).toBeGreaterThan(0);
  });
});

describeWith(REDIS, "stored responses in Redis", () => {
  let redis: RedisServer;
  let first: RunningAdapter;
  let second: RunningAdapter;
  beforeAll(async () => {
    redis = await startRedis();
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `responses-test-${process.pid}:` };
    first = await startAdapter(stack.workspace.url, environment);
    second = await startAdapter(stack.workspace.url, environment);
  });
  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
    await redis.stop();
  });

  it("lets one replica read, continue and delete what another stored, under expiring namespaced keys", async () => {
    const created = await openaiClient(first.url).responses.create({ model: "ask", input: "How much annual leave do I get?" });
    // Stored after the answer is delivered.
    await waitFor(async () => (await metricSum([first], "adapter_store_writes_total", { store: "response", outcome: "stored" }))[0] === 1, "the response stored");
    const retrieved = await openaiClient(second.url).responses.retrieve(created.id);
    expect(retrieved.output_text).toBe(created.output_text);
    const keys = await redis.client.keys(`responses-test-${process.pid}:response*`);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const key of keys) expect(await redis.client.ttl(key)).toBeGreaterThan(0);
    const before = stack.workspace.control.creates.length;
    await openaiClient(second.url).responses.create({ model: "ask", input: "Does it carry over?", previous_response_id: created.id });
    const continued = stack.workspace.control.creates.slice(before)[0]?.body.id;
    expect(stack.workspace.control.creates.filter((entry) => entry.body.id === continued)).toHaveLength(2);
    await openaiClient(second.url).responses.delete(created.id);
    await expect(openaiClient(first.url).responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });
});
