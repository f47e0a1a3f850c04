import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../../helpers/redis-topologies.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// Background answers count against the caps and the key's rate limits while they run, not only
// while the request that started them is open (docs/responses-api.md#background-mode).

const sdk = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, defaultHeaders: { "service-workspace": "acme" }, maxRetries: 0 });

const chat = async (url: string) => {
  const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("How much annual leave do I get?")) });
  return { status: response.status, body: (await response.json()) as any };
};

describe("background answers under the limits", () => {
  let capped: Stack;
  let limited: Stack;
  beforeAll(async () => {
    // Queries slow enough to be running while the next request comes.
    [capped, limited] = await Promise.all([
      startStack({ MAX_CONCURRENT_PER_WORKSPACE: "1" }, { stepDelayMs: 5000 }),
      startStack({ RATE_LIMIT_CONCURRENT: "1" }, { stepDelayMs: 5000 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([capped?.close(), limited?.close()]);
  });

  it("holds a place under the workspace's cap until the answer ends, not until its request closes", async () => {
    const created = await sdk(capped.url).responses.create({ model: "build", input: "How much annual leave do I get?", background: true });
    expect(capped.adapter.limit.inFlight).toBe(1);
    expect(await (await fetch(`${capped.url}/metrics`)).text()).toMatch(/^adapter_background_answers 1$/m);
    const refused = await chat(capped.url);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("concurrency_limit");
    await sdk(capped.url).responses.cancel(created.id);
    await until(async () => capped.adapter.limit.inFlight === 0, "the cancelled answer to give its place back");
    expect(await (await fetch(`${capped.url}/metrics`)).text()).toMatch(/^adapter_background_answers 0$/m);
    const next = await sdk(capped.url).responses.create({ model: "build", input: "How much annual leave do I get?", background: true });
    expect(next.status).toBe("in_progress");
    await sdk(capped.url).responses.cancel(next.id);
  });

  it("holds the key's slot (RATE_LIMIT_CONCURRENT) until the answer ends", async () => {
    const created = await sdk(limited.url).responses.create({ model: "build", input: "How much annual leave do I get?", background: true });
    const refused = await chat(limited.url);
    expect(refused.status).toBe(429);
    await expect(sdk(limited.url).responses.create({ model: "ask", input: "Another question", background: true })).rejects.toMatchObject({ status: 429 });
    await sdk(limited.url).responses.cancel(created.id);
    let next: any;
    await until(async () => {
      next = await sdk(limited.url).responses.create({ model: "ask", input: "Another question", background: true });
      return true;
    }, "the key's slot to be free again");
    expect(next.status).toBe("in_progress");
    await sdk(limited.url).responses.cancel(next.id);
  });
});
