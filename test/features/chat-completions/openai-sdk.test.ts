import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack({ QUERY_TIMEOUT_MS: "1000" });
  client = new OpenAI({
    apiKey: API_KEY,
    baseURL: `${stack.url}/v1`,
    defaultHeaders: { "Service-Workspace": "acme" },
    maxRetries: 2,
  });
});
afterAll(() => stack.close());

describe("the official openai SDK pointed at the adapter", () => {
  it("gets a completion with content, citations and usage", async () => {
    const completion = await client.chat.completions.create({
      model: "ask",
      messages: [{ role: "user", content: "How are security incidents reported?" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toContain("within one hour");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    // OpenAI's own chat annotation, typed by the SDK.
    const citation = completion.choices[0]?.message.annotations?.[0]?.url_citation;
    expect(citation?.url).toBe("urn:workspace-document:acme:security-policy.md");
    expect(completion.choices[0]?.message.content?.slice(citation?.start_index, citation?.end_index)).toBe("[1]");
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("lists the models", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(["ask", "reason", "build", "acme/ask", "acme/reason", "acme/build", "globex/ask", "globex/reason", "globex/build"]);
  });

  it("raises errors as APIError with a readable message and the interface detail", async () => {
    const error = await client.chat.completions
      .create({ model: "gpt-4o" as never, messages: [{ role: "user", content: "hi" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    const apiError = error as APIError;
    expect(apiError.status).toBe(422);
    expect(apiError.message).toMatch(
      /^422 Invalid request: body\.model: Input should be 'ask', 'reason', 'build'/,
    );
    expect(apiError.type).toBe("invalid_request_error");
  });

  it("does not retry a failed query (no duplicate queries upstream)", async () => {
    const before = stack.workspace.control.creates.length;
    const error = await client.chat.completions
      .create({ model: "ask", messages: [{ role: "user", content: "leave [fault:failed]" }] })
      .catch((caught: unknown) => caught);
    expect((error as APIError).status).toBe(502);
    expect((error as APIError).message).toMatch(/simulated failure/);
    expect(stack.workspace.control.creates.length - before).toBe(1);
  });

  it("raises an authentication error for a wrong key", async () => {
    const wrong = new OpenAI({
      apiKey: "sk-nope",
      baseURL: `${stack.url}/v1`,
      defaultHeaders: { "Service-Workspace": "acme" },
    });
    await expect(
      wrong.chat.completions.create({ model: "ask", messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
