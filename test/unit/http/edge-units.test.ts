import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { ConcurrencyLimit } from "../../../src/limits/concurrency-limit.js";
import { inspectJson } from "../../../src/http/inspect-json.js";
import { Lifecycle } from "../../../src/http/lifecycle.js";
import { RequestContexts } from "../../../src/http/request-contexts.js";
import { ServiceUnavailableError } from "../../../src/errors/adapter-error.js";
import { loadConfig, type RateLimitSettings } from "../../../src/config/config.js";
import { admit } from "../../../src/http/admission.js";
import { MemoryLimitCounters } from "../../../src/limits/limit-counters.js";
import { RateLimits } from "../../../src/limits/rate-limits.js";

describe("inspectJson", () => {
  it("finds NUL characters, lone surrogates, forbidden keys and excessive depth, with their paths", () => {
    const body = JSON.parse('{"messages":[{"content":"a\\u0000b"},{"content":"\\ud800"}],"__proto__":{},"x":[[[[1]]]]}');
    const types = inspectJson(body, 4).map((issue) => [issue.loc.join("."), issue.type]);
    expect(types).toEqual(
      expect.arrayContaining([
        ["body.messages.0.content", "string_nul"],
        ["body.messages.1.content", "string_unicode"],
        ["body.__proto__", "forbidden_key"],
        ["body.x.0.0.0", "too_deep"],
      ]),
    );
    expect(inspectJson({ model: "ask", messages: [{ role: "user", content: "😀 fine" }] }, 4)).toEqual([]);
  });
});

describe("ConcurrencyLimit", () => {
  it("refuses past the total and per-workspace caps with a 429, and frees a place once per release", () => {
    const limit = new ConcurrencyLimit(3, 2);
    const a1 = limit.acquire("a");
    limit.acquire("a");
    expect(() => limit.acquire("a")).toThrow(expect.objectContaining({ status: 429, headers: { "retry-after": "1" } }));
    const b1 = limit.acquire("b");
    expect(() => limit.acquire("c")).toThrow(expect.objectContaining({ status: 429 }));
    a1();
    a1();
    expect(limit.inFlight).toBe(2);
    limit.acquire("c");
    b1();
    expect(limit.inFlight).toBe(2);
  });
});

/** A response that closes when told to, and records what was sent. */
class FakeResponse extends EventEmitter {
  statusCode = 200;
  headers: Record<string, unknown> = {};
  body = "";
  writableFinished = false;
  headersSent = false;
  closed = false;
  setHeader(name: string, value: unknown) {
    this.headers[name] = value;
  }
  getHeader(name: string) {
    return this.headers[name];
  }
  end(text = "") {
    this.body += text;
    this.writableFinished = true;
  }
  close() {
    this.closed = true;
    this.emit("close");
  }
}

/** A request's context, over a response that closes when told to. */
function opened(contexts: RequestContexts) {
  const response = new FakeResponse();
  const context = contexts.open({ headers: {}, url: "/" } as IncomingMessage, response as unknown as ServerResponse);
  return { response, context, served: response as unknown as ServerResponse };
}

describe("admit", () => {
  const contexts = new RequestContexts([]);

  it("frees the slot as the response's last bytes are written, before 'close', and once", async () => {
    const counters = new MemoryLimitCounters(60);
    const settings = loadConfig({ RATE_LIMIT_CONCURRENT: "1", RATE_LIMIT_RPM: "10" }).limits.rate as RateLimitSettings;
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: new RateLimits(settings, counters) };
    const { response, context } = opened(contexts);
    const admission = await admit(context, { principal: "hash", account: "team-search", workspace: "acme", asksWorkspace: true }, options);
    expect(admission.meter.countsTokens).toBe(false);
    expect(admission.headers["x-ratelimit-remaining-requests"]).toBe("9");
    expect(counters.slotsHeld).toBe(1);
    await expect(admit(opened(contexts).context, { principal: "hash", account: "team-search", workspace: "acme", asksWorkspace: true }, options)).rejects.toThrow(/answers in flight/);
    response.emit("prefinish");
    expect(counters.slotsHeld).toBe(0);
    response.close();
    expect(counters.slotsHeld).toBe(0);
    expect(options.limit.inFlight).toBe(1); // the refused request's response never closed
  });
});

describe("RequestContext", () => {
  it("runs close hooks when the response closes, and at once on one already closed (a client gone while its request awaited admission)", () => {
    const calls: string[] = [];
    const { response, context } = opened(new RequestContexts([]));
    context.whenClosed((completed) => calls.push(`before ${completed}`));
    expect(calls).toEqual([]);
    response.close();
    expect(calls).toEqual(["before false"]);
    context.whenClosed((completed) => calls.push(`after ${completed}`));
    expect(calls).toEqual(["before false", "after false"]);
  });
});

describe("Lifecycle", () => {
  const contexts = new RequestContexts([]);

  it("counts requests until their response closes, and drains at once when none is in flight", async () => {
    const lifecycle = new Lifecycle();
    const one = opened(contexts);
    expect(lifecycle.accepting("/v1/models", one.served, one.context)).toBe(true);
    expect(lifecycle.activeRequests).toBe(1);
    one.response.close();
    expect(lifecycle.activeRequests).toBe(0);
    expect(await lifecycle.drain(10_000)).toEqual({ finished: true });
  });

  it("while draining, refuses new requests with 503 and Connection: close, but answers liveness and readiness", async () => {
    const lifecycle = new Lifecycle();
    const inFlight = opened(contexts);
    lifecycle.accepting("/v1/chat/completions", inFlight.served, inFlight.context);
    const draining = lifecycle.drain(10_000);
    const refused = opened(contexts);
    expect(lifecycle.accepting("/v1/models", refused.served, refused.context)).toBe(false);
    expect(refused.response.statusCode).toBe(503);
    expect(refused.response.headers.connection).toBe("close");
    expect(JSON.parse(refused.response.body).error.type).toBe("service_unavailable");
    const health = opened(contexts);
    expect(lifecycle.accepting("/health", health.served, health.context)).toBe(true);
    // Readiness answers for itself (503 while draining) rather than being refused.
    const readiness = opened(contexts);
    expect(lifecycle.accepting("/ready", readiness.served, readiness.context)).toBe(true);
    expect(readiness.response.headers.connection).toBe("close");
    inFlight.response.close();
    // /health is still open: the drain waits for it too, then reports the grace time ran out.
    expect(await Promise.race([draining, new Promise((resolve) => setTimeout(() => resolve("waiting"), 50))])).toBe("waiting");
  });

  it("gives up after the grace time, and ends every open stream with its failure", async () => {
    const lifecycle = new Lifecycle();
    const open = opened(contexts);
    lifecycle.accepting("/v1/chat/completions", open.served, open.context);
    const ended: unknown[] = [];
    lifecycle.trackStream({ fail: async (error) => void ended.push(error) });
    const untrack = lifecycle.trackStream({ fail: async (error) => void ended.push(error) });
    untrack();
    expect(lifecycle.openStreams).toBe(1);
    const started = performance.now();
    expect(await lifecycle.drain(60)).toEqual({ finished: false });
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    await lifecycle.endStreams();
    expect(ended).toEqual([expect.any(ServiceUnavailableError)]);
    expect(lifecycle.openStreams).toBe(0);
  });
});
