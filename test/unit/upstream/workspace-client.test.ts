import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  GatewayTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RequestValidationError,
  UpstreamError,
} from "../../../src/errors/adapter-error.js";
import { createWorkspaceClient, statusError } from "../../../src/upstream/workspace-client.js";

describe("statusError", () => {
  const json = (body: unknown) => JSON.stringify(body);

  it("passes 401, 403 and 404 on with the upstream's detail", () => {
    expect(statusError(401, json({ detail: "Invalid API key" }), {}, "POST /queries")).toEqual(expect.any(AuthenticationError));
    expect(statusError(401, json({ detail: "Invalid API key" }), {}, "POST /queries").message).toBe("Invalid API key");
    expect(statusError(403, json({ detail: "No access" }), {}, "GET /queries")).toEqual(expect.any(PermissionDeniedError));
    expect(statusError(404, json({ detail: "Query not found" }), {}, "POST /queries")).toMatchObject({ status: 404, message: "Query not found" });
    expect(statusError(404, "", {}, "POST /queries")).toEqual(expect.any(NotFoundError));
  });

  it("keeps a 422's issue list, and wraps a plain 422 message in one issue", () => {
    const listed = statusError(422, json({ detail: [{ loc: ["body", "content"], msg: "Field required", type: "missing" }] }), {}, "POST /queries");
    expect(listed).toEqual(expect.any(RequestValidationError));
    expect((listed as RequestValidationError).issues).toEqual([{ loc: ["body", "content"], msg: "Field required", type: "missing" }]);
    const plain = statusError(422, json({ detail: "Bad mode" }), {}, "POST /queries") as RequestValidationError;
    expect(plain.issues).toEqual([{ loc: ["body"], msg: "Bad mode", type: "value_error" }]);
  });

  it("passes 429 on with its Retry-After, as retryable", () => {
    const error = statusError(429, json({ detail: "Slow down" }), { "retry-after": "7" }, "GET /queries");
    expect(error).toEqual(expect.any(RateLimitError));
    expect(error).toMatchObject({ headers: { "retry-after": "7" }, retryable: true });
  });

  it("turns 408 and 504 into 504, and every other status (or a body that is not JSON) into a 502 naming the call", () => {
    expect(statusError(504, "", {}, "GET /queries")).toEqual(expect.any(GatewayTimeoutError));
    expect(statusError(408, "", {}, "GET /queries").status).toBe(504);
    const broken = statusError(500, "<html>oops</html>", {}, "POST /queries");
    expect(broken).toEqual(expect.any(UpstreamError));
    expect(broken.message).toBe("The workspace service answered 500 to POST /queries");
    expect(statusError(418, json({ detail: "teapot" }), {}, "GET /queries")).toMatchObject({ status: 502, retryable: false });
  });
});

describe("the workspace client against a misbehaving server", () => {
  let server: Server;
  let base: string;
  let mode: "not-json" | "wrong-shape" | "hang" | "reset" | "ok" = "ok";
  let calls = 0;
  beforeAll(async () => {
    server = createServer((request, response) => {
      calls += 1;
      if (mode === "hang") return;
      if (mode === "reset") {
        request.socket.destroy();
        return;
      }
      response.setHeader("content-type", "application/json");
      if (mode === "not-json") response.end("{broken");
      else if (mode === "wrong-shape") response.end(JSON.stringify({ unexpected: true }));
      else response.end(JSON.stringify({ data: [{ id: "q1", status: "PROCESSED", output: "ok" }, { nonsense: 1 }], next_cursor: null, has_more: false }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = () => createWorkspaceClient({ baseUrl: base, timeoutMs: 200, getRetries: 2 });
  const caller = { credential: "sk-secret-value", workspace: "acme" };

  it("reads list pages, skipping items it cannot read", async () => {
    mode = "ok";
    const page = await client().listQueries(caller, { limit: 100 });
    expect(page).toEqual({ items: [expect.objectContaining({ id: "q1" })], nextCursor: null, hasMore: false });
  });

  it("turns a body that is not JSON, or of the wrong shape, into a 502 naming the call", async () => {
    mode = "not-json";
    await expect(client().listQueries(caller, { limit: 100 })).rejects.toThrow("The workspace service sent a body that is not JSON for GET /queries");
    mode = "wrong-shape";
    await expect(client().createQuery(caller, { content: "x" })).rejects.toThrow(/unexpected body for POST \/queries/);
  });

  it("retries a GET on a reset connection, never a create, and never shows the credential", async () => {
    mode = "reset";
    calls = 0;
    const listed = await client().listQueries(caller, { limit: 100 }).catch((error: unknown) => error as Error);
    expect(listed).toEqual(expect.any(UpstreamError));
    expect(calls).toBe(3);
    calls = 0;
    const created = await client().createQuery(caller, { content: "x" }).catch((error: unknown) => error as Error);
    expect(created).toEqual(expect.any(UpstreamError));
    expect(calls).toBe(1);
    expect(String(created.message) + JSON.stringify(created)).not.toContain("sk-secret-value");
  });

  it("gives up on a silent server after its timeout with a 504", async () => {
    // The server never answers, and undici's own limits are minutes: a 504 within the test's time is the client's timeout (200 ms).
    mode = "hang";
    await expect(client().createQuery(caller, { content: "x" })).rejects.toEqual(expect.any(GatewayTimeoutError));
  });

  it("reports an unreachable service as a 502 with the reason, and health as false", async () => {
    const nowhere = createWorkspaceClient({ baseUrl: "http://127.0.0.1:1", timeoutMs: 200, getRetries: 0 });
    await expect(nowhere.listQueries(caller, { limit: 1 })).rejects.toThrow(/Could not reach the workspace service for GET \/queries \(ECONNREFUSED\)/);
    expect(await nowhere.checkHealth()).toBe(false);
  });
});
