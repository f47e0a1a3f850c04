import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAIErrors } from "../../helpers/openai-schemas.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

describe("the adapter's routes", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it("answers a known path with the wrong method 405 with Allow, in the error shape", async () => {
    const response = await fetch(`${stack.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
    const body = (await response.json()) as { error: unknown };
    expect(body).toMatchObject({ detail: expect.stringContaining("GET"), error: { type: "invalid_request_error", code: "method_not_allowed" } });
    expect(openAIErrors("ErrorResponse", { error: body.error })).toEqual([]);
    expect((await fetch(`${stack.url}/metrics`, { method: "POST" })).headers.get("allow")).toBe("GET");
  });

  it("answers an unknown path 404 in the same shape", async () => {
    const response = await fetch(`${stack.url}/v2/nothing`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ detail: "No route for GET /v2/nothing", error: { type: "not_found_error" } });
  });

  it("lists every route of the table in the OpenAPI document, and labels metrics by template", async () => {
    const document = (await (await fetch(`${stack.url}/openapi.json`)).json()) as { paths: Record<string, object> };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(["/v1/chat/completions", "/v1/models", "/v1/models/{id}", "/health", "/ready", "/metrics", "/openapi.json"]),
    );
    await fetch(`${stack.url}/v1/models/acme/ask`, { headers: { authorization: `Bearer ${API_KEY}` } });
    await fetch(`${stack.url}/random-${Math.random()}`);
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    expect(metrics).toMatch(/adapter_http_requests_total\{route="\/v1\/models\/\{id\}",mode="",status="200"\}/);
    expect(metrics).toMatch(/route="other",mode="",status="404"/);
    expect(metrics).not.toMatch(/random-/);
  });
});
