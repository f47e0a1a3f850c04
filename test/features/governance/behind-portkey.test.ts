import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readUsage, type Spent, sumsByGroup, sumsOf } from "../../helpers/governance.js";
import { type PortkeyGateway, portkeyHeaders, startPortkey } from "../../helpers/portkey-gateway.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/governance.md#behind-a-gateway: Portkey's open-source gateway (@portkey-ai/gateway 1.15.2, run
// for real on loopback) in front of the adapter. What goes through it, and what it loses, measured.
// The losses are asserted too: when a Portkey release changes one, this test says so, and the
// table in the docs is brought up to date.
const GATEWAY_KEY = "sk-portkey-gateway";
const CLIENT_KEY = "sk-team-search";
const ADMIN_KEY = "sk-ops-admin";
const FORWARDED = ["service-workspace", "x-conversation-id", "x-user-id"];

describe("behind Portkey's open-source gateway", () => {
  let stack: Stack;
  let portkey: PortkeyGateway;

  /** An OpenAI client that talks to the adapter through the gateway, as a gateway's user would. */
  const viaPortkey = (key: string, extra: Record<string, string>, forward: readonly string[] = FORWARDED) =>
    new OpenAI({ baseURL: `${portkey.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: { ...portkeyHeaders(stack.url, forward), ...extra } });
  const question = "How much annual leave do I get?";

  beforeAll(async () => {
    stack = await startStack({
      WORKSPACE_API_KEY: API_KEY,
      DEFAULT_WORKSPACE: "globex",
      ADAPTER_API_KEYS: `team-search=${CLIENT_KEY}`,
      GATEWAY_API_KEYS: `portkey=${GATEWAY_KEY}`,
      GATEWAY_IDENTITY_HEADERS: "x-user-id",
      ADMIN_API_KEYS: ADMIN_KEY,
    });
    portkey = await startPortkey();
  });
  afterAll(async () => {
    await portkey?.stop();
    await stack?.close();
  });

  it("passes a chat answer with its citations and usage, a Responses answer with its annotations, and a background response", async () => {
    const alice = viaPortkey(GATEWAY_KEY, { "service-workspace": "acme", "x-user-id": "alice" });
    const completion = await alice.chat.completions.create({ model: "ask", messages: [{ role: "user", content: question }] });
    const annotations = completion.choices[0]?.message.annotations ?? [];
    expect(annotations.length).toBeGreaterThan(0);
    expect(annotations[0]).toMatchObject({ type: "url_citation", url_citation: { url: expect.any(String), title: expect.any(String) } });
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    const response = await alice.responses.create({ model: "ask", input: question });
    const cited = response.output.flatMap((item) => (item.type === "message" ? item.content : [])).flatMap((part) => (part.type === "output_text" ? part.annotations : []));
    expect(cited.map((annotation) => annotation.type)).toContain("url_citation");
    let background = await alice.responses.create({ model: "ask", input: question, background: true });
    expect(background.status).toBe("in_progress");
    background = await waitFor(async () => {
      const retrieved = await alice.responses.retrieve(background.id);
      return retrieved.status === "completed" ? retrieved : undefined;
    }, "the background response to complete, read through the gateway");
    expect(background.usage?.output_tokens).toBeGreaterThan(0);
  });

  it("honours the identity header it forwards from the gateway's key, and ignores it from another key; usage sums per identity", async () => {
    const spent: Spent[] = [];
    for (const [user, key, account] of [["alice", GATEWAY_KEY, "portkey/alice"], ["bob", GATEWAY_KEY, "portkey/bob"], ["mallory", CLIENT_KEY, "team-search"]] as const) {
      const client = viaPortkey(key, { "service-workspace": "acme", "x-user-id": user });
      const completion = await client.chat.completions.create({ model: "ask", messages: [{ role: "user", content: question }] });
      spent.push({ account, workspace: "acme", mode: "ask", input: completion.usage?.prompt_tokens ?? 0, output: completion.usage?.completion_tokens ?? 0 });
    }
    const start = Math.floor(Date.now() / 1000) - 60;
    const mine = (page: { data: never[] }) => new Map([...sumsByGroup(page)].filter(([name]) => ["portkey/bob", "team-search"].includes(name.split(" ")[0] as string)));
    const expected = new Map([...sumsOf(spent)].filter(([name]) => !name.startsWith("portkey/alice")));
    await waitFor(async () => {
      const page = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&group_by=api_key_id,project_id,model`);
      return JSON.stringify([...mine(page.body)].sort()) === JSON.stringify([...expected].sort());
    }, "the usage of the identities behind the gateway");
    const accounts = (await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&group_by=api_key_id`)).body.data.flatMap((bucket: { results: { api_key_id: string }[] }) =>
      bucket.results.map((result) => result.api_key_id),
    );
    expect(accounts).not.toContain("portkey/mallory");
    expect(accounts).toEqual(expect.arrayContaining(["portkey/alice", "portkey/bob", "team-search"]));
  });

  it("keeps a conversation when the gateway forwards its header", async () => {
    const client = viaPortkey(GATEWAY_KEY, { "service-workspace": "acme", "x-user-id": "carol", "x-conversation-id": "conversation-9" });
    const queryIds: (string | null)[] = [];
    for (const content of ["What is the travel policy?", "And for trains?"]) {
      const { response } = await client.chat.completions.create({ model: "ask", messages: [{ role: "user", content }] }).withResponse();
      queryIds.push(response.headers.get("service-query-id"));
    }
    expect(queryIds[0]).toBeTruthy();
    expect(queryIds[1]).toBe(queryIds[0]);
  });

  it("passes a quota's refusal to the identity that reached it, and only to it: the 429, its error and its headers", async () => {
    // A daily quota per identity behind the gateway: alice spends hers; bob, behind the same gateway key, still has his.
    const limited = await startStack({
      WORKSPACE_API_KEY: API_KEY,
      DEFAULT_WORKSPACE: "globex",
      GATEWAY_API_KEYS: `portkey=${GATEWAY_KEY}`,
      GATEWAY_IDENTITY_HEADERS: "x-user-id",
      RATE_LIMIT_TPD: "50",
      // An answer expected at one token: a reservation fits the tiny quota until an answer has spent it.
      RATE_LIMIT_ANSWER_TOKENS: "ask:1",
    });
    try {
      const through = (user: string) =>
        new OpenAI({ baseURL: `${portkey.url}/v1`, apiKey: GATEWAY_KEY, maxRetries: 0, defaultHeaders: { ...portkeyHeaders(limited.url, FORWARDED), "x-user-id": user } });
      const ask = (user: string) => through(user).chat.completions.create({ model: "ask", messages: [{ role: "user", content: question }] });
      let refusal: unknown;
      for (let answers = 0; answers < 20 && refusal === undefined; answers += 1) {
        refusal = await ask("alice").then(() => undefined, (error: unknown) => error);
      }
      expect(refusal).toBeInstanceOf(OpenAI.RateLimitError);
      const error = refusal as InstanceType<typeof OpenAI.RateLimitError>;
      expect(error.status).toBe(429);
      expect(error.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
      expect(error.message).toMatch(/tokens per day \(TPD\): limit 50/);
      expect(Number(error.headers?.get("retry-after"))).toBeGreaterThan(0);
      expect(error.headers?.get("x-ratelimit-limit-tokens")).toBe("50");
      expect(error.headers?.get("x-ratelimit-remaining-tokens")).toBe("0");
      // The same gateway key, another identity: its own quota.
      expect((await ask("bob")).choices[0]?.message.content).toBeTruthy();
    } finally {
      await limited.close();
    }
  });

  it("loses, as Portkey 1.15.2 runs on Node 22 and 24: every header not forwarded, every stream, and MCP", async () => {
    // Without x-portkey-forward-headers: no workspace, no conversation, no identity reaches the adapter.
    const bare = viaPortkey(GATEWAY_KEY, { "service-workspace": "acme", "x-user-id": "dave", "x-conversation-id": "conversation-10" }, []);
    const turns = [];
    for (const content of ["What is the travel policy?", "And for trains?"]) {
      turns.push((await bare.chat.completions.create({ model: "ask", messages: [{ role: "user", content }] }).withResponse()).response.headers.get("service-query-id"));
    }
    expect(turns[1], "the conversation forks: update docs/governance.md#portkey if this changed").not.toBe(turns[0]);
    const start = Math.floor(Date.now() / 1000) - 60;
    const page = await waitFor(async () => {
      const read = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&group_by=api_key_id,project_id`);
      return [...sumsByGroup(read.body).keys()].some((name) => name.startsWith("portkey globex")) ? read.body : undefined;
    }, "the answers without forwarded headers, under the gateway's own name in the default workspace");
    expect([...sumsByGroup(page).keys()].some((name) => name.startsWith("portkey/dave"))).toBe(false);
    // Streams, chat and Responses alike, fail in the gateway (Portkey issues #1389, #1550: it appends
    // its headers to the fetched response's immutable headers); so do MCP calls through its proxy route.
    const streamed = await fetch(`${portkey.url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...portkeyHeaders(stack.url, FORWARDED), authorization: `Bearer ${GATEWAY_KEY}`, "content-type": "application/json", "service-workspace": "acme" },
      body: JSON.stringify({ model: "ask", stream: true, messages: [{ role: "user", content: question }] }),
    });
    expect(streamed.status, "streams go through now: update docs/governance.md#portkey").toBe(500);
    expect(await streamed.json()).toEqual({ status: "failure", message: "Something went wrong" });
    const responsesStream = await fetch(`${portkey.url}/v1/responses`, {
      method: "POST",
      headers: { ...portkeyHeaders(stack.url, FORWARDED), authorization: `Bearer ${GATEWAY_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "ask", stream: true, input: question }),
    });
    expect(responsesStream.status).toBe(500);
    const mcp = await fetch(`${portkey.url}/v1/proxy/mcp`, {
      method: "POST",
      headers: {
        ...portkeyHeaders(stack.url, ["mcp-protocol-version", "accept"]),
        "x-portkey-custom-host": stack.url,
        authorization: `Bearer ${GATEWAY_KEY}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: { question } } }),
    });
    expect(mcp.status, "MCP goes through now: update docs/governance.md#portkey").toBe(500);
    expect(portkey.errors()).toMatch(/TypeError: immutable/);
  });
});
