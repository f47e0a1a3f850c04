import { OpenAIConversationsSession, run, Agent, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { API_KEY, headers, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

// The Conversations API (docs/responses-api.md#conversations): conversations and their items over
// the openai SDK, each one workspace query thread that responses.create({conversation}) continues.

const sdk = (url: string, apiKey = API_KEY) => new OpenAI({ baseURL: `${url}/v1`, apiKey, defaultHeaders: { "service-workspace": "acme" }, maxRetries: 0 });

const raw = async (url: string, path: string, init: RequestInit = {}, key = API_KEY) => {
  const response = await fetch(`${url}${path}`, { ...init, headers: { ...headers(), authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as any };
};

describe("the Conversations API", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack?.close());

  it("creates, reads, updates and deletes a conversation with its items, paged in either order", async () => {
    const client = sdk(stack.url);
    const created = await client.conversations.create({
      metadata: { team: "hr" },
      items: [
        { type: "message", role: "user", content: "Hello" },
        { type: "message", role: "assistant", content: "Hi, how can I help?" },
      ],
    });
    expect(created).toMatchObject({ object: "conversation", metadata: { team: "hr" } });
    expect(created.id).toMatch(/^conv_[0-9a-f]{48}$/);
    expect(await client.conversations.retrieve(created.id)).toEqual(created);
    const updated = await client.conversations.update(created.id, { metadata: { team: "finance" } });
    expect(updated.metadata).toEqual({ team: "finance" });
    const added = await client.conversations.items.create(created.id, { items: [{ type: "message", role: "user", content: "Another" }] });
    expect(added.data).toHaveLength(1);
    const ascending = [];
    for await (const item of client.conversations.items.list(created.id, { order: "asc", limit: 1 })) ascending.push(item);
    expect(ascending.map((item: any) => item.content[0].text)).toEqual(["Hello", "Hi, how can I help?", "Another"]);
    expect(ascending.map((item: any) => item.content[0].type)).toEqual(["input_text", "output_text", "input_text"]);
    const descending = await client.conversations.items.list(created.id, { limit: 2 });
    expect(descending.data.map((item: any) => item.content[0].text)).toEqual(["Another", "Hi, how can I help?"]);
    expect(descending.has_more).toBe(true);
    const first = ascending[0] as any;
    expect(await client.conversations.items.retrieve(first.id, { conversation_id: created.id })).toEqual(first);
    const afterDelete = await client.conversations.items.delete(first.id, { conversation_id: created.id });
    expect(afterDelete.id).toBe(created.id);
    expect((await client.conversations.items.list(created.id)).data).toHaveLength(2);
    expect(await client.conversations.delete(created.id)).toEqual({ id: created.id, object: "conversation.deleted", deleted: true });
    await expect(client.conversations.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("continues one workspace query over the responses of a conversation and adds their input and output as items", async () => {
    const client = sdk(stack.url);
    const conversation = await client.conversations.create({});
    const before = stack.workspace.control.creates.length;
    const first = await client.responses.create({ model: "ask", input: "How much annual leave do I get?", conversation: conversation.id });
    const second = await client.responses.create({ model: "ask", input: "Does it carry over?", conversation: { id: conversation.id }, stream: false });
    expect((first as any).conversation).toEqual({ id: conversation.id });
    expect(first.output_text).toContain("25 days");
    const ids = stack.workspace.control.creates.slice(before).map((entry) => entry.body.id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(1);
    const items = (await client.conversations.items.list(conversation.id, { order: "asc" })).data as any[];
    const messages = items.filter((item) => item.type === "message");
    expect(messages.map((item) => item.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(messages[0].content[0].text).toBe("How much annual leave do I get?");
    expect(messages[1].content[0].text).toBe(first.output_text);
    expect(messages[3].content[0].text).toBe(second.output_text);
  });

  it("answers bad input with the API's errors: unknown and foreign ids 404, conversation with previous_response_id 400, bad bodies 422", async () => {
    const client = sdk(stack.url);
    const conversation = await client.conversations.create({});
    for (const [method, path] of [
      ["GET", "/v1/conversations/conv_unknown"],
      ["GET", `/v1/conversations/${conversation.id}/items/msg_unknown`],
      ["DELETE", `/v1/conversations/${conversation.id}/items/msg_unknown`],
    ] as const) {
      const { status, body } = await raw(stack.url, path, { method });
      expect(status, `${method} ${path}`).toBe(404);
      expect(body.error.type).toBe("not_found_error");
    }
    for (const [method, path] of [
      ["GET", `/v1/conversations/${conversation.id}`],
      ["DELETE", `/v1/conversations/${conversation.id}`],
      ["GET", `/v1/conversations/${conversation.id}/items`],
    ] as const) {
      expect((await raw(stack.url, path, { method }, "sk-other-key")).status, `${method} ${path} with another key`).toBe(404);
    }
    const foreign = await raw(stack.url, "/v1/responses", { method: "POST", body: JSON.stringify({ model: "ask", input: "Hi there", conversation: conversation.id }) }, "sk-other-key");
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.param).toBe("conversation");
    const previous = await client.responses.create({ model: "ask", input: "How much annual leave do I get?" });
    const both = await raw(stack.url, "/v1/responses", {
      method: "POST",
      body: JSON.stringify({ model: "ask", input: "And then?", conversation: conversation.id, previous_response_id: previous.id }),
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toMatchObject({ type: "invalid_request_error", param: "conversation" });
    const badMetadata = await raw(stack.url, "/v1/conversations", { method: "POST", body: JSON.stringify({ metadata: { key: 7 } }) });
    expect(badMetadata.status).toBe(422);
    expect(badMetadata.body.detail[0].loc).toEqual(["body", "metadata", "key"]);
    const noItems = await raw(stack.url, `/v1/conversations/${conversation.id}/items`, { method: "POST", body: JSON.stringify({ items: [] }) });
    expect(noItems.status).toBe(422);
    const badOrder = await raw(stack.url, `/v1/conversations/${conversation.id}/items?order=up`);
    expect(badOrder.status).toBe(422);
  });

  it("keeps an Agents SDK OpenAIConversationsSession over two runs", async () => {
    const client = sdk(stack.url);
    setDefaultOpenAIClient(client);
    setOpenAIAPI("responses");
    setTracingDisabled(true);
    const session = new OpenAIConversationsSession({ client });
    const agent = new Agent({ name: "Assistant", model: "ask" });
    const before = stack.workspace.control.creates.length;
    const first = await run(agent, "How much annual leave do I get?", { session });
    expect(String(first.finalOutput)).toContain("25 days");
    const second = await run(agent, "Does it carry over?", { session });
    expect(String(second.finalOutput).length).toBeGreaterThan(0);
    const id = await session.getSessionId();
    const items = (await client.conversations.items.list(id, { order: "asc" })).data as any[];
    const messages = items.filter((item) => item.type === "message");
    expect(messages.map((item) => item.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect((await session.getItems()).length).toBe(items.length);
    // The second run sends the session's history: the adapter continues the first run's workspace query.
    const ids = stack.workspace.control.creates.slice(before).map((entry) => entry.body.id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(1);
  });
});

describeWith(REDIS, "conversations across two replicas", () => {
  let redis: RedisServer;
  let stack: Stack;
  let other: RunningAdapter;
  beforeAll(async () => {
    redis = await startRedis();
    const environment = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `conversations-api-${process.pid}:` };
    stack = await startStack(environment);
    other = await startAdapter(stack.workspace.url, environment);
  });
  afterAll(async () => {
    await other?.close();
    await stack?.close();
    await redis?.stop();
  });

  it("continues one workspace query with turns on either replica and lists them on both", async () => {
    const conversation = await sdk(stack.url).conversations.create({ metadata: { from: "one" } });
    const before = stack.workspace.control.creates.length;
    await sdk(stack.url).responses.create({ model: "ask", input: "How much annual leave do I get?", conversation: conversation.id });
    await sdk(other.url).responses.create({ model: "ask", input: "Does it carry over?", conversation: conversation.id });
    const ids = stack.workspace.control.creates.slice(before).map((entry) => entry.body.id);
    expect(new Set(ids).size).toBe(1);
    for (const url of [stack.url, other.url]) {
      const items = (await sdk(url).conversations.items.list(conversation.id, { order: "asc" })).data as any[];
      expect(items.filter((item) => item.type === "message").map((item) => item.role)).toEqual(["user", "assistant", "user", "assistant"]);
    }
    expect((await sdk(other.url).conversations.retrieve(conversation.id)).metadata).toEqual({ from: "one" });
    await sdk(other.url).conversations.delete(conversation.id);
    await expect(sdk(stack.url).conversations.retrieve(conversation.id)).rejects.toMatchObject({ status: 404 });
  });
});
