import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayTimeoutError, UpstreamError } from "../../../src/errors/adapter-error.js";
import { createWorkspaceClient } from "../../../src/upstream/workspace-client.js";

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
