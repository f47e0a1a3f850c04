import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAIErrors } from "../../helpers/openai-schemas.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ MAX_CHOICES: "4", QUERY_TIMEOUT_MS: "1500" });
});
afterAll(() => stack.close());

async function post(body: unknown, extraHeaders: Record<string, string | undefined> = {}) {
  const merged = Object.fromEntries(
    Object.entries({ ...headers(), ...extraHeaders }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  const response = await fetch(`${stack.url}/v1/chat/completions`, {
    method: "POST",
    headers: merged,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: JSON.parse(text) as Record<string, any>,
    text,
  };
}

function expectErrorShape(body: Record<string, unknown>) {
  expect(openAIErrors("ErrorResponse", body)).toEqual([]);
  expect(body.detail).toBeDefined();
}

describe("POST /v1/chat/completions", () => {
  it("answers a question with a cited chat.completion that validates against OpenAI's schema", async () => {
    const {
      status,
      body,
      headers: responseHeaders,
    } = await post(chatBody("How many days of annual leave do employees get?"));
    expect(status).toBe(200);
    expect(openAIErrors("CreateChatCompletionResponse", body)).toEqual([]);
    const message = body.choices[0].message;
    expect(message.content).toContain("25 days of paid annual leave");
    expect(message.content).toMatch(/\n\nSources:\n\[1\] handbook\.md — Leave policy/);
    expect(message.sources[0]).toMatchObject({ filename: "handbook.md", title: "Leave policy", cited: true });
    const first = message.annotations[0];
    expect(first.type).toBe("url_citation");
    expect(first.url_citation).toMatchObject({ url: "urn:workspace-document:acme:handbook.md", title: "Leave policy" });
    expect([...message.content].slice(first.url_citation.start_index, first.url_citation.end_index).join("")).toBe("[1]");
    expect(message.reasoning_content).toContain("Using tool: search_documents");
    expect(body.id).toBe(`chatcmpl-${responseHeaders.get("service-query-id")}`);
    expect(body.model).toBe("ask");
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.usage.prompt_tokens).toBeGreaterThan(5);
    expect(responseHeaders.get("cache-control")).toBe("no-store");
  });

  it("sends the prompt, a chosen id, the mode and the query extras to the upstream", async () => {
    const before = stack.workspace.control.creates.length;
    const { status, headers: responseHeaders } = await post({
      model: "reason",
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is the remote work policy" },
            { type: "text", text: "and the leave policy?" },
          ],
        },
      ],
      query: { graph: true, bound_artifacts: { ids: ["a1"] } },
      temperature: 0.2,
      user: "someone",
    });
    expect(status).toBe(200);
    const created = stack.workspace.control.creates.slice(before);
    expect(created).toEqual([
      {
        workspace: "acme",
        body: {
          content: "What is the remote work policy\nand the leave policy?",
          id: responseHeaders.get("service-query-id"),
          mode: "reason",
          graph: true,
          bound_artifacts: { ids: ["a1"] },
        },
      },
    ]);
  });

  it("answers n choices from n independent queries", async () => {
    const before = stack.workspace.control.creates.length;
    const { status, body } = await post(chatBody("What is the password policy?", { n: 2 }));
    expect(status).toBe(200);
    expect(openAIErrors("CreateChatCompletionResponse", body)).toEqual([]);
    expect(body.choices.map((choice: { index: number }) => choice.index)).toEqual([0, 1]);
    const ids = stack.workspace.control.creates.slice(before).map((create) => create.body.id);
    expect(new Set(ids).size).toBe(2);
    expect(body.choices[1].message.content).toContain("14 characters");
  });

  it("routes to the workspace named in the model when no header is sent", async () => {
    const before = stack.workspace.control.creates.length;
    const { status, body } = await post(chatBody("password?", { model: "globex/ask" }), {
      "service-workspace": undefined,
    });
    expect(status).toBe(200);
    expect(body.model).toBe("globex/ask");
    expect(stack.workspace.control.creates[before]?.workspace).toBe("globex");
  });

  it("gives 401 {detail} without a bearer credential, and passes an upstream 401 on", async () => {
    const missing = await post(chatBody("hi"), { authorization: undefined });
    expect(missing.status).toBe(401);
    expect(missing.body.detail).toBe("Not authenticated");
    expect(missing.headers.get("www-authenticate")).toBe("Bearer");
    expectErrorShape(missing.body);
    const wrong = await post(chatBody("hi"), { authorization: "Bearer sk-wrong-key" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toBe("Invalid API key");
    expect(wrong.text).not.toContain("sk-wrong-key");
    expectErrorShape(wrong.body);
  });

  it.each([
    [
      "no workspace",
      chatBody("hi"),
      { "service-workspace": undefined },
      ["header", "service-workspace"],
      "missing",
    ],
    [
      "an unsafe workspace id",
      chatBody("hi"),
      { "service-workspace": "../admin" },
      ["header", "service-workspace"],
      "string_pattern_mismatch",
    ],
    ["an unknown model", chatBody("hi", { model: "gpt-4o" }), {}, ["body", "model"], "literal_error"],
    ["no messages", { model: "ask", messages: [] }, {}, ["body", "messages"], "too_short"],
    ["a missing model", { messages: [{ role: "user", content: "hi" }] }, {}, ["body", "model"], "missing"],
    ["n above the limit", chatBody("hi", { n: 5 }), {}, ["body", "n"], "less_than_equal"],
    ["n of zero", chatBody("hi", { n: 0 }), {}, ["body", "n"], "greater_than_equal"],
    ["a fractional n", chatBody("hi", { n: 1.5 }), {}, ["body", "n"], "int_type"],
    ["stream that is not a boolean", chatBody("hi", { stream: "yes" }), {}, ["body", "stream"], "bool_type"],
    [
      "content of a wrong type",
      { model: "ask", messages: [{ role: "user", content: 5 }] },
      {},
      ["body", "messages", 0, "content"],
      "union_error",
    ],
    [
      "no user message",
      { model: "ask", messages: [{ role: "system", content: "x" }] },
      {},
      ["body", "messages"],
      "value_error",
    ],
    [
      "a user message without text",
      { model: "ask", messages: [{ role: "user", content: [] }] },
      {},
      ["body", "messages", 0, "content"],
      "value_error",
    ],
    [
      "a query object that sets the id",
      chatBody("hi", { query: { id: "x" } }),
      {},
      ["body", "query", "id"],
      "value_error",
    ],
    ["a body that is an array", [1, 2], {}, ["body"], "model_attributes_type"],
    ["invalid JSON", '{"model": ', {}, ["body", 10], "json_invalid"],
  ])(
    "gives 422 in the FastAPI shape for %s, without calling the upstream",
    async (_name, body, extra, loc, type) => {
      const calls = stack.workspace.control.calls.create;
      const { status, body: response, headers: responseHeaders } = await post(body, extra);
      expect(status).toBe(422);
      expectErrorShape(response);
      expect(response.detail[0]).toMatchObject({ loc, type });
      expect(typeof response.detail[0].msg).toBe("string");
      expect(response.error.type).toBe("invalid_request_error");
      expect(response.error.message.length).toBeGreaterThan(10);
      expect(responseHeaders.get("x-should-retry")).toBe("false");
      expect(stack.workspace.control.calls.create).toBe(calls);
    },
  );

  it("reports every problem of a request at once", async () => {
    const { body } = await post({ model: "nope", messages: "x", n: "2" }, { "service-workspace": undefined });
    expect(body.detail.map((issue: { loc: unknown[] }) => issue.loc.join("."))).toEqual([
      "header.service-workspace",
      "body.model",
      "body.messages",
      "body.n",
    ]);
  });

  it("gives 415 for a body that is not declared as JSON", async () => {
    const { status, body } = await post(JSON.stringify(chatBody("hi")), { "content-type": "text/plain" });
    expect(status).toBe(415);
    expectErrorShape(body);
  });

  it("gives 413 for a body over the limit", async () => {
    const { status, body } = await post(chatBody("x".repeat(1_100_000)));
    expect(status).toBe(413);
    expectErrorShape(body);
  });

  it("gives 502 with the failure text and no retry for a FAILED query", async () => {
    const { status, body, headers: responseHeaders } = await post(chatBody("leave policy [fault:failed]"));
    expect(status).toBe(502);
    expectErrorShape(body);
    expect(body.error.code).toBe("query_failed");
    expect(body.detail).toMatch(/failed: The workspace could not finish this query \(simulated failure\)\./);
    expect(responseHeaders.get("x-should-retry")).toBe("false");
  });

  it("gives 504 when the query does not finish before the mode's deadline", async () => {
    const { status, body, headers: responseHeaders } = await post(chatBody("leave policy [fault:stall]"));
    expect(status).toBe(504);
    expectErrorShape(body);
    expect(body.detail).toMatch(/did not finish within 1500 ms/);
    expect(responseHeaders.get("x-should-retry")).toBe("false");
  });

  it("passes the upstream's 404 on for a workspace it does not know", async () => {
    const { status, body } = await post(chatBody("hi"), { "service-workspace": "initech" });
    expect(status).toBe(404);
    expect(body.detail).toBe("Workspace not found");
    expectErrorShape(body);
  });

  it.each([
    [{ on: "create", kind: "status", status: 429, retryAfter: "7" } as const, 429],
    [{ on: "create", kind: "status", status: 403 } as const, 403],
    [{ on: "create", kind: "status", status: 500 } as const, 502],
    [{ on: "create", kind: "broken-body" } as const, 502],
    [{ on: "create", kind: "wrong-shape" } as const, 502],
    [{ on: "list", kind: "status", status: 401, times: 1 } as const, 401],
    [{ on: "list", kind: "broken-body", times: 5 } as const, 502],
  ])("maps the upstream fault %o to %i with a readable error", async (fault, expected) => {
    stack.workspace.control.inject(fault);
    try {
      const { status, body, headers: responseHeaders, text } = await post(chatBody("leave policy"));
      expect(status).toBe(expected);
      expectErrorShape(body);
      expect(text).not.toContain(API_KEY);
      if (expected === 429) expect(responseHeaders.get("retry-after")).toBe("7");
    } finally {
      stack.workspace.control.clearFaults();
    }
  });

  it("recovers from a lost create answer by finding the query in the list instead of creating it again", async () => {
    const before = stack.workspace.control.creates.length;
    stack.workspace.control.inject({ on: "create", kind: "drop-after-create" });
    const { status, body } = await post(chatBody("leave policy"));
    expect(status).toBe(200);
    expect(body.choices[0].message.content).toContain("25 days");
    expect(stack.workspace.control.creates.length - before).toBe(1);
  });
});

describe("GET /v1/models", () => {
  it("lists the three modes in OpenAI's list shape", async () => {
    const response = await fetch(`${stack.url}/v1/models`, { headers: headers() });
    const body = (await response.json()) as { data: { id: string }[] };
    expect(openAIErrors("ListModelsResponse", body)).toEqual([]);
    expect(body.data.map((model: { id: string }) => model.id).slice(0, 3)).toEqual(["ask", "reason", "build"]);
    const one = await fetch(`${stack.url}/v1/models/reason`, { headers: headers() });
    expect(await one.json()).toMatchObject({ id: "reason", object: "model" });
    const missing = await fetch(`${stack.url}/v1/models/gpt-4`, { headers: headers() });
    expect(missing.status).toBe(404);
    const anonymous = await fetch(`${stack.url}/v1/models`);
    expect(anonymous.status).toBe(401);
  });

  it("says what every model supports in LiteLLM's model-info fields: chat in text, streamed, JSON schemas validated, one forced function, no images", async () => {
    const body = (await (await fetch(`${stack.url}/v1/models`, { headers: headers() })).json()) as { data: Record<string, unknown>[] };
    const one = (await (await fetch(`${stack.url}/v1/models/acme/build`, { headers: headers() })).json()) as Record<string, unknown>;
    for (const model of [...body.data, one]) {
      expect(model).toMatchObject({
        mode: "chat",
        supported_openai_params: ["stream", "stream_options", "n", "response_format", "tools", "tool_choice"],
        supports_function_calling: false,
        supports_parallel_function_calling: false,
        supports_tool_choice: true,
        supports_response_schema: true,
        structured_outputs: "validated",
        supports_vision: false,
        supports_pdf_input: false,
        supports_audio_input: false,
        supports_native_streaming: true,
      });
    }
  });
});

describe("GET /health and /ready", () => {
  it("answers without a credential", async () => {
    const health = await fetch(`${stack.url}/health`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${stack.url}/ready`);
    expect(await ready.json()).toEqual({ status: "ready", upstream: true });
  });

  it("answers unknown paths with a 404 in the usual error shape", async () => {
    const response = await fetch(`${stack.url}/v1/completions`, { method: "POST", headers: headers() });
    expect(response.status).toBe(404);
    expectErrorShape((await response.json()) as Record<string, unknown>);
  });
});
