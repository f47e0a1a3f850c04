import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Route, RouteTable } from "../../src/http/route-table.js";
import { openAIErrors } from "../helpers/openai-schemas.js";
import { API_KEY, type Stack, startStack } from "../helpers/start-stack.js";

const route = (method: Route["method"], path: string): Route => ({ method, path, handler: { express: () => undefined }, operation: {} });

describe("RouteTable", () => {
  const table = new RouteTable([route("GET", "/v1/models"), route("GET", "/v1/models/{id+}"), route("POST", "/v1/things/{id}"), route("DELETE", "/v1/things/{id}")]);

  it("matches templates with one-segment and rest-of-path parameters, decoded", () => {
    expect(table.match("GET", "/v1/models/acme/ask")).toMatchObject({ kind: "route", params: { id: "acme/ask" } });
    expect(table.match("DELETE", "/v1/things/a%20b")).toMatchObject({ kind: "route", params: { id: "a b" } });
    expect(table.match("HEAD", "/v1/models")).toMatchObject({ kind: "route" });
    expect(table.match("GET", "/v1/things/a/b")).toEqual({ kind: "none" });
    expect(table.match("GET", "/nowhere")).toEqual({ kind: "none" });
  });

  it("says which methods a known path allows", () => {
    expect(table.match("GET", "/v1/things/x")).toEqual({ kind: "method-not-allowed", allowed: ["POST", "DELETE"] });
  });

  it("refuses a route declared twice, and writes OpenAPI paths from the templates", () => {
    expect(() => new RouteTable([route("GET", "/a"), route("GET", "/a")])).toThrow(/declared twice/);
    expect(Object.keys(table.openApiPaths())).toEqual(["/v1/models", "/v1/models/{id}", "/v1/things/{id}"]);
    expect(RouteTable.expressPath("/v1/models/{id+}")).toBe("/v1/models/*id");
  });
});

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
