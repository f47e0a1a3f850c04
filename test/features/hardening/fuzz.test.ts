import fc from "fast-check";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ QUERY_TIMEOUT_MS: "2000", MAX_CHOICES: "3" }, { stepDelayMs: 0 });
});
afterAll(() => stack.close());

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 40 });
const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom("user", "assistant", "system", "tool"), fc.string()),
    content: fc.oneof(fc.string(), fc.constant(null), fc.array(fc.record({ type: fc.constantFrom("text", "image_url"), text: fc.string() })), fc.jsonValue()),
  },
  { requiredKeys: [] },
);
const chatLike = fc.record(
  {
    model: fc.oneof(fc.constantFrom("ask", "reason", "build", "acme/ask", "../ask"), fc.string(), fc.jsonValue()),
    messages: fc.oneof(fc.array(message, { maxLength: 4 }), fc.jsonValue()),
    n: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.jsonValue()),
    stream: fc.oneof(fc.boolean(), fc.jsonValue()),
    stream_options: fc.jsonValue(),
    query: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue()),
    query_id: fc.oneof(fc.uuid(), fc.string()),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  chatLike.map((value) => JSON.stringify(value)),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string(),
);
const headerSet = fc.record({
  contentType: fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", undefined),
  authorization: fc.oneof(fc.constant(`Bearer ${API_KEY}`), printable, fc.constant(undefined)),
  workspace: fc.oneof(fc.constantFrom("acme", "globex", undefined), printable),
  conversation: fc.oneof(fc.constant(undefined), printable),
});

describe("random requests", () => {
  it("never get a 5xx, always get a JSON error body when refused, and the server stays up", async () => {
    await fc.assert(
      fc.asyncProperty(body, headerSet, async (payload, sent) => {
        let call = request(stack.url).post("/v1/chat/completions");
        if (sent.contentType) call = call.set("content-type", sent.contentType);
        if (sent.authorization !== undefined) call = call.set("authorization", sent.authorization);
        if (sent.workspace !== undefined) call = call.set("service-workspace", sent.workspace);
        if (sent.conversation !== undefined) call = call.set("x-conversation-id", sent.conversation);
        const response = await call.send(payload);
        expect(response.status).toBeLessThan(500);
        if (response.status >= 400) {
          expect(response.headers["content-type"]).toMatch(/application\/json/);
          expect(response.body.detail).toBeDefined();
          expect(typeof response.body.error?.message).toBe("string");
        }
      }),
      { numRuns: 400, seed: 20261121 },
    );
    expect((await request(stack.url).get("/health")).status).toBe(200);
  }, 60_000);
});
