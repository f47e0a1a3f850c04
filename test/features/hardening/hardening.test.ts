import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postStream } from "../../helpers/read-sse.js";
import { startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { chatBody, FIXTURE_DOCUMENTS, headers, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ MAX_CONCURRENT_PER_WORKSPACE: "3", QUERY_TIMEOUT_MS: "3000" });
});
afterAll(() => stack.close());

async function post(url: string, body: string | object, extraHeaders: Record<string, string> = {}) {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(extraHeaders),
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

describe("bad input", () => {
  it.each([
    ["deeply nested JSON", `{"model":"ask","messages":[{"role":"user","content":"hi"}],"query":{"a":${"[".repeat(5000)}${"]".repeat(5000)}}}`, "too_deep"],
    ["a lone surrogate", '{"model":"ask","messages":[{"role":"user","content":"hi \\ud800"}]}', "string_unicode"],
    ["a NUL byte", '{"model":"ask","messages":[{"role":"user","content":"hi \\u0000"}]}', "string_nul"],
    ["a __proto__ key", '{"model":"ask","messages":[{"role":"user","content":"hi"}],"query":{"__proto__":{"admin":true}}}', "forbidden_key"],
    ["a constructor key", '{"model":"ask","messages":[{"role":"user","content":"hi","constructor":{"prototype":1}}]}', "forbidden_key"],
    [
      "thousands of messages",
      JSON.stringify({ model: "ask", messages: Array.from({ length: 3000 }, () => ({ role: "user", content: "hi" })) }),
      "too_long",
    ],
  ])("refuses %s with a 422 before any upstream call", async (_name, body, type) => {
    const creates = stack.workspace.control.calls.create;
    const response = await post(stack.url, body);
    expect(response.status).toBe(422);
    expect(response.body.detail[0].type).toBe(type);
    expect(response.body.error.message).toEqual(expect.any(String));
    expect(stack.workspace.control.calls.create).toBe(creates);
  });

  it.each([
    ["white space inside", `Bearer sk-a${" ".repeat(12_000)}b`, "Invalid authentication credentials"],
    ["nothing after the scheme", "Bearer   ", "Not authenticated"],
  ])("refuses an Authorization header with %s with 401 {detail}", async (_name, authorization, detail) => {
    const response = await post(stack.url, chatBody("hi"), { authorization });
    expect(response.status).toBe(401);
    expect(response.body.detail).toBe(detail);
  });

  it("trims white space after the credential", async () => {
    const plain = await post(stack.url, chatBody("hi"), { authorization: "Bearer sk-wrong-key" });
    const padded = await post(stack.url, chatBody("hi"), { authorization: "Bearer sk-wrong-key \t " });
    expect(padded.status).toBe(plain.status);
    expect(padded.body.detail).toEqual(plain.body.detail);
  });

  it("refuses header values that could not be sent upstream", async () => {
    const workspace = await post(stack.url, chatBody("hi"), { "service-workspace": "acme\u00e9" }).catch(() => null);
    expect(workspace === null || workspace.status === 422).toBe(true);
    const response = await post(stack.url, chatBody("hi"), { "service-workspace": "a b" });
    expect(response.status).toBe(422);
  });
});

describe("concurrency caps", () => {
  it("answers beyond the per-workspace cap with a fast 429 and Retry-After", async () => {
    const controller = new AbortController();
    const stalled = Array.from({ length: 3 }, () =>
      fetch(`${stack.url}/v1/chat/completions`, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(chatBody("leave [fault:stall]")),
        signal: controller.signal,
      }).catch(() => null),
    );
    await waitFor(() => stack.adapter.limit.inFlight === 3, "the three stalled requests admitted");
    // Fast: refused at once rather than queued behind the stalled ones, which never end (an answer at all shows it).
    const refused = await post(stack.url, chatBody("leave"));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    const other = await post(stack.url, chatBody("leave"), { "service-workspace": "globex" });
    expect(other.status).toBe(200);
    controller.abort();
    await Promise.all(stalled);
    await waitFor(() => stack.adapter.limit.inFlight === 0, "the aborted requests' places freed");
    expect((await post(stack.url, chatBody("leave"))).status).toBe(200);
    expect(stack.adapter.limit.inFlight).toBe(0);
  });
});

/** A minimal upstream whose answers a test writes by hand. */
async function fakeUpstream(handler: (path: string, respond: (status: number, body: string, headers?: Record<string, string>) => void) => void) {
  const server: Server = createServer((request, response) => {
    handler(request.url ?? "", (status, body, extra = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...extra });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe("upstream faults", () => {
  it("does not follow redirects", async () => {
    let followed = false;
    const upstream = await fakeUpstream((path, respond) => {
      if (path.startsWith("/elsewhere")) followed = true;
      respond(307, "{}", { location: "/elsewhere/queries" });
    });
    const adapter = await startAdapter(upstream.url, { DEFAULT_WORKSPACE: "acme" });
    try {
      const response = await post(adapter.url, chatBody("hi"));
      expect(response.status).toBe(502);
      expect(followed).toBe(false);
    } finally {
      await adapter.close();
      await upstream.close();
    }
  });

  it("caps the size of an upstream body", async () => {
    const upstream = await fakeUpstream((_path, respond) =>
      respond(200, JSON.stringify({ id: "q", status: "PROCESSED", output: "x".repeat(10_000), steps: [] })),
    );
    const adapter = await startAdapter(upstream.url, { DEFAULT_WORKSPACE: "acme", UPSTREAM_MAX_BODY_BYTES: "4096" });
    try {
      const response = await post(adapter.url, chatBody("hi"));
      expect(response.status).toBe(502);
      expect(response.body.detail).toMatch(/larger than 4096 bytes/);
    } finally {
      await adapter.close();
      await upstream.close();
    }
  });

  it("times out an upstream that does not answer, far below undici's defaults", async () => {
    const adapter = await startAdapter(stack.workspace.url, { DEFAULT_WORKSPACE: "acme", UPSTREAM_TIMEOUT_MS: "300" });
    stack.workspace.control.inject({ on: "create", kind: "hang" });
    try {
      // The create hangs for ever, and undici's own limits are minutes: a 504 within the test's time is UPSTREAM_TIMEOUT_MS.
      const response = await post(adapter.url, chatBody("hi"));
      expect(response.status).toBe(504);
    } finally {
      stack.workspace.control.clearFaults();
      await adapter.close();
    }
  });

  it("gives 502 when the upstream cannot be reached", async () => {
    const adapter = await startAdapter("http://127.0.0.1:1", { DEFAULT_WORKSPACE: "acme" });
    try {
      const response = await post(adapter.url, chatBody("hi"));
      expect(response.status).toBe(502);
      expect(response.body.detail).toMatch(/Could not reach the workspace service for POST \/queries \(ECONNREFUSED\)/);
    } finally {
      await adapter.close();
    }
  });

  it("retries list and health calls that meet a 503, and answers normally", async () => {
    const lists = stack.workspace.control.calls.list;
    stack.workspace.control.inject({ on: "list", kind: "status", status: 503, times: 2 });
    const response = await post(stack.url, chatBody("leave", { model: "acme/ask" }), { "service-workspace": "globex" });
    expect(response.status).toBe(200);
    expect(stack.workspace.control.calls.list - lists).toBeGreaterThanOrEqual(3);
    stack.workspace.control.inject({ on: "health", kind: "status", status: 503 });
    expect((await fetch(`${stack.url}/ready`)).status).toBe(200);
  });
});

describe("headers", () => {
  it("sends no X-Powered-By, sends nosniff and no-store, and no CORS by default", async () => {
    const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("leave")) });
    expect(response.headers.get("x-powered-by")).toBeNull();
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("cache-control")).toBe("no-store");
    // A browser page of an origin not listed gets no CORS headers, nor an answer (docs/operating.md#a-local-workspace-stays-local).
    const foreign = await fetch(`${stack.url}/v1/chat/completions`, {
      method: "POST",
      headers: headers({ origin: "https://evil.example" }),
      body: JSON.stringify(chatBody("leave")),
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    expect(foreign.headers.get("x-powered-by")).toBeNull();
  });

  it("allows listed origins only, preflight included", async () => {
    const adapter = await startAdapter(stack.workspace.url, { CORS_ORIGINS: "https://chat.example" });
    try {
      const preflight = await fetch(`${adapter.url}/v1/chat/completions`, {
        method: "OPTIONS",
        headers: { origin: "https://chat.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization" },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("https://chat.example");
      const other = await fetch(`${adapter.url}/health`, { headers: { origin: "https://evil.example" } });
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await adapter.close();
    }
  });
});

describe("server timeouts", () => {
  it("drops a client that sends its headers too slowly, without cutting long streams", async () => {
    const slow = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 80 });
    const adapter = await startAdapter(slow.url, {
      DEFAULT_WORKSPACE: "acme",
      SERVER_HEADERS_TIMEOUT_MS: "300",
      SERVER_REQUEST_TIMEOUT_MS: "300",
    });
    try {
      const socket = connect((adapter.server.address() as AddressInfo).port, "127.0.0.1");
      let received = "";
      socket.on("data", (data) => {
        received += data;
      });
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      // The drip may still be writing when the server answers 408 and closes: the peer then resets the
      // connection (ECONNRESET). That is the drop this test expects; the 408 and the close are checked.
      socket.on("error", () => undefined);
      socket.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n");
      // The headers drip in for ever: only the headers timeout can end this within the test's time.
      const drip = setInterval(() => socket.write("X-Slow: 1\r\n"), 100);
      await closed;
      clearInterval(drip);
      expect(received).toMatch(/^HTTP\/1\.1 408/);

      // A stream that lasts longer than both timeouts still completes.
      const streamStarted = performance.now();
      const stream = await postStream(`${adapter.url}/v1/chat/completions`, headers(), chatBody("leave policy", { stream: true, model: "reason" }));
      expect(performance.now() - streamStarted).toBeGreaterThan(600); // twice the timeouts (the workspace's pace: a busy machine only adds)
      expect(stream.data.at(-1)).toBe("[DONE]");
      expect(stream.data.some((item) => item?.choices?.[0]?.finish_reason === "stop")).toBe(true);
    } finally {
      await adapter.close();
      await slow.close();
    }
  });
});
