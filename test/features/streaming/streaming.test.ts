import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAIErrors } from "../../helpers/openai-schemas.js";
import { parseSse, postStream } from "../../helpers/read-sse.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { steppingClock, waitFor } from "../../helpers/wait-for.js";

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack({ QUERY_TIMEOUT_MS: "1500", SSE_KEEPALIVE_MS: "40" }, { stepDelayMs: 40 });
  client = new OpenAI({ apiKey: API_KEY, baseURL: `${stack.url}/v1`, defaultHeaders: { "Service-Workspace": "acme" } });
});
afterAll(() => stack.close());

const url = () => `${stack.url}/v1/chat/completions`;
const chunksOf = (data: any[]) => data.filter((item) => item !== "[DONE]" && !item.error);

/** Concatenates a choice's deltas, as a client assembles the message. */
function assemble(data: any[], index = 0) {
  let content = "";
  let reasoning = "";
  let annotations: unknown;
  let sources: unknown;
  for (const chunk of chunksOf(data)) {
    for (const choice of chunk.choices) {
      if (choice.index !== index) continue;
      content += choice.delta.content ?? "";
      reasoning += choice.delta.reasoning_content ?? "";
      if (choice.delta.annotations) annotations = choice.delta.annotations;
      if (choice.delta.sources) sources = choice.delta.sources;
    }
  }
  return { content, reasoning, annotations, sources };
}

describe("streamed chat completions", () => {
  it("sends SSE headers and only data frames, every chunk valid, in OpenAI's order", async () => {
    const stream = await postStream(url(), headers(), chatBody("How much annual leave do employees get?", { stream: true }));
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.headers.get("cache-control")).toContain("no-cache");
    expect(stream.headers.get("x-accel-buffering")).toBe("no");
    // Only `data:` frames and keep-alive comments, each ended by a blank line; no `event:` lines.
    for (const frame of stream.raw.split("\n\n").filter(Boolean)) expect(frame).toMatch(/^(data: .+|: keep-alive)$/s);
    expect(stream.raw).not.toMatch(/^event:/m);
    expect(stream.raw.endsWith("data: [DONE]\n\n")).toBe(true);

    const chunks = chunksOf(stream.data);
    for (const chunk of chunks) expect(openAIErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    expect(new Set(chunks.map((chunk) => `${chunk.id}|${chunk.created}|${chunk.model}`)).size).toBe(1);
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    // Open WebUI's source events ride on chunks with no choices, just before the finish chunk.
    const sourceEvents = chunks.filter((chunk) => chunk.choices.length === 0);
    expect(sourceEvents.length).toBeGreaterThan(0);
    for (const chunk of sourceEvents) expect(chunk.event).toMatchObject({ type: "source", data: { source: { name: expect.any(String) } } });
    const kinds = chunks
      .filter((chunk) => chunk.choices.length > 0)
      .map((chunk) => [Object.keys(chunk.choices[0].delta).sort().join("+"), chunk.choices[0].finish_reason].filter(Boolean).join(":"));
    expect(kinds[0]).toBe("content+role");
    // The finish chunk carries the annotations and sources (Lobe Chat reads them only there).
    expect(kinds.at(-1)).toBe("annotations+sources:stop");
    expect(chunks.at(-1).citations.length).toBeGreaterThan(0);
    // Steps come before the output grows (how many chunks it grows over depends on the machine's
    // pace against the workspace's: the next test counts them on a clock of its own).
    expect(kinds.indexOf("reasoning_content")).toBeLessThan(kinds.indexOf("content"));
    expect(kinds.filter((kind) => kind === "content").length).toBeGreaterThan(0);
    expect(chunks.some((chunk) => "usage" in chunk)).toBe(false);
  });

  it("sends the output as it grows: a chunk for each growth a poll sees, every one of them, in order", async () => {
    // The workspace's clock moves on with each request it answers, not with the wall clock, and
    // there is no realtime channel: every poll sees the answer grown by one output chunk at most,
    // however fast or busy the machine is.
    const paced = await startStack({}, { stepDelayMs: 40, clock: steppingClock(20), realtime: false });
    try {
      const prompt = "How much annual leave do employees get?";
      const stream = await postStream(`${paced.url}/v1/chat/completions`, headers(), chatBody(prompt, { stream: true }));
      const whole = await fetch(`${paced.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody(prompt)) });
      const content = chunksOf(stream.data)
        .filter((chunk) => chunk.choices.length > 0 && chunk.choices[0].delta.content)
        .map((chunk) => chunk.choices[0].delta.content as string);
      expect(content.length).toBeGreaterThan(2);
      expect(content.join("")).toBe(((await whole.json()) as any).choices[0].message.content);
    } finally {
      await paced.close();
    }
  });

  it("streams exactly the content, reasoning and citations of the non-streamed answer", async () => {
    for (const model of ["ask", "reason", "build"]) {
      const prompt = "What is the remote work policy and the leave policy?";
      const stream = await postStream(url(), headers(), chatBody(prompt, { model, stream: true }));
      const whole = await fetch(url(), { method: "POST", headers: headers(), body: JSON.stringify(chatBody(prompt, { model })) });
      const message = ((await whole.json()) as any).choices[0].message;
      const streamed = assemble(stream.data);
      expect(streamed.content).toBe(message.content);
      expect(streamed.reasoning).toBe(message.reasoning_content);
      expect(streamed.annotations).toEqual(message.annotations);
      expect(streamed.sources).toEqual(message.sources);
      expect((streamed.annotations as unknown[]).length).toBeGreaterThan(0);
    }
  });

  it("parses to the same events however the bytes are split across reads", async () => {
    const stream = await postStream(url(), headers(), chatBody("Was ist die Urlaubsregel? 🏖️ leave policy", { stream: true }));
    const bytes = new TextEncoder().encode(stream.raw);
    const whole = parseSse(bytes).map((event) => event.data);
    for (const size of [1, 2, 3, 7, 13]) {
      expect(parseSse(bytes, () => size).map((event) => event.data)).toEqual(whole);
    }
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return 1 + (seed % 64);
    };
    expect(parseSse(bytes, random).map((event) => event.data)).toEqual(whole);
  });

  it("interleaves n choices, each with its own role and finish chunk, and sends usage once", async () => {
    const stream = await postStream(
      url(),
      headers(),
      chatBody("password rules", { stream: true, n: 2, stream_options: { include_usage: true } }),
    );
    const chunks = chunksOf(stream.data);
    for (const chunk of chunks) expect(openAIErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    for (const index of [0, 1]) {
      const own = chunks.filter((chunk) => chunk.choices[0]?.index === index);
      expect(own[0].choices[0].delta.role).toBe("assistant");
      expect(own.filter((chunk) => chunk.choices[0].delta.role).length).toBe(1);
      expect(own.filter((chunk) => chunk.choices[0].finish_reason === "stop").length).toBe(1);
      expect(assemble(stream.data, index).content).toContain("14 characters");
    }
    const usage = chunks.filter((chunk) => "usage" in chunk);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ id: chunks[0].id, choices: [] });
    expect(chunks.at(-1)).toBe(usage[0]);
    expect(usage[0].usage.total_tokens).toBe(usage[0].usage.prompt_tokens + usage[0].usage.completion_tokens);
    const positions = chunks.map((chunk) => chunk.choices[0]?.index);
    expect(positions.slice(0, 2)).toEqual([0, 1]);
  });

  it("ends a FAILED query with an error frame and [DONE], never a clean stop", async () => {
    const stream = await postStream(url(), headers(), chatBody("leave [fault:failed]", { stream: true }));
    expect(stream.status).toBe(200);
    const last = stream.data.slice(-2);
    expect(last[1]).toBe("[DONE]");
    expect(last[0].error).toMatchObject({ type: "query_failed", code: "query_failed", param: null });
    expect(last[0].error.message).toMatch(/simulated failure/);
    expect(openAIErrors("ErrorResponse", last[0])).toEqual([]);
    expect(chunksOf(stream.data).some((chunk) => chunk.choices[0]?.finish_reason === "stop")).toBe(false);
    expect(chunksOf(stream.data).some((chunk) => "error" in chunk)).toBe(false);
  });

  it("ends a query past its deadline with an error frame", async () => {
    const stream = await postStream(url(), headers(), chatBody("leave [fault:stall]", { stream: true }));
    expect(stream.data.at(-2).error).toMatchObject({ type: "timeout_error" });
    expect(stream.data.at(-1)).toBe("[DONE]");
    expect(stream.raw).toContain(": keep-alive\n\n");
  });

  it("gives ordinary HTTP errors for failures before the stream starts", async () => {
    const invalid = await fetch(url(), { method: "POST", headers: headers(), body: JSON.stringify(chatBody("hi", { stream: true, model: "x" })) });
    expect(invalid.status).toBe(422);
    expect(invalid.headers.get("content-type")).toMatch(/json/);
    stack.workspace.control.inject({ on: "create", kind: "status", status: 429, retryAfter: "3" });
    const limited = await fetch(url(), { method: "POST", headers: headers(), body: JSON.stringify(chatBody("hi", { stream: true })) });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("3");
  });

  it("stops polling for a client that disconnects, and polls no more", async () => {
    const controller = new AbortController();
    const response = await fetch(url(), {
      method: "POST",
      headers: headers(),
      body: JSON.stringify(chatBody("leave [fault:stall]", { stream: true })),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    await waitFor(() => stack.adapter.watcher.activePollers === 1, "the query's poller");
    controller.abort();
    await waitFor(() => stack.adapter.watcher.activePollers === 0, "the poller to stop");
    const listsAfterAbort = stack.workspace.control.calls.list;
    // Nothing more should happen now: a quiet spell of several poll intervals (at most 50 ms each)
    // shows it. The poller aborts a list call on its way when it stops, which the workspace may still
    // receive (on a busy machine): that one at most.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stack.workspace.control.calls.list).toBeLessThanOrEqual(listsAfterAbort + 1);
    expect(stack.adapter.watcher.activePollers).toBe(0);
  });

  it("stops polling for a non-streaming client that disconnects", async () => {
    const controller = new AbortController();
    const request = fetch(url(), { method: "POST", headers: headers(), body: JSON.stringify(chatBody("leave [fault:stall]")), signal: controller.signal });
    await waitFor(() => stack.adapter.watcher.activePollers === 1, "the query's poller");
    controller.abort();
    await request.catch(() => undefined);
    await waitFor(() => stack.adapter.watcher.activePollers === 0, "the poller to stop");
    const listsAfterAbort = stack.workspace.control.calls.list;
    await new Promise((resolve) => setTimeout(resolve, 300)); // a quiet spell, as above
    expect(stack.workspace.control.calls.list).toBeLessThanOrEqual(listsAfterAbort + 1);
    expect(stack.adapter.watcher.activePollers).toBe(0);
  });
});

describe("the openai SDK reading the stream", () => {
  it("iterates the chunks", async () => {
    const stream = await client.chat.completions.create({
      model: "ask",
      messages: [{ role: "user", content: "How are security incidents reported?" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = "";
    let usage: unknown;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(content).toContain("within one hour");
    expect(usage).toMatchObject({ total_tokens: expect.any(Number) });
  });

  it("assembles a final completion with the stream helper, annotations and sources included", async () => {
    const completion = await client.chat.completions
      .stream({ model: "ask", messages: [{ role: "user", content: "How are security incidents reported?" }] })
      .finalChatCompletion();
    const message = completion.choices[0]?.message as any;
    expect(message.content).toContain("within one hour");
    const citation = message.annotations[0].url_citation;
    expect(citation.url).toBe("urn:workspace-document:acme:security-policy.md");
    expect(message.sources[0]).toMatchObject({ filename: "security-policy.md", cited: true });
    expect([...message.content].slice(citation.start_index, citation.end_index).join("")).toBe("[1]");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
  });

  it("raises an error sent inside the stream as an APIError", async () => {
    const stream = await client.chat.completions.create({
      model: "ask",
      messages: [{ role: "user", content: "leave [fault:failed]" }],
      stream: true,
    });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // reading until the error frame
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toMatch(/simulated failure/);
  });
});
