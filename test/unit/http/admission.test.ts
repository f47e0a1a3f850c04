import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { loadConfig, type RateLimitSettings } from "../../../src/config/config.js";
import { RateLimitError } from "../../../src/errors/adapter-error.js";
import { admit } from "../../../src/http/admission.js";
import { RequestContexts } from "../../../src/http/request-contexts.js";
import { ConcurrencyLimit } from "../../../src/limits/concurrency-limit.js";
import { MemoryLimitCounters } from "../../../src/limits/limit-counters.js";
import { RateLimits } from "../../../src/limits/rate-limits.js";

/** A response that ends and closes when told to. */
class FakeResponse extends EventEmitter {
  statusCode = 200;
  closed = false;
  headersSent = false;
  writableFinished = false;
  headers: Record<string, unknown> = {};
  setHeader(name: string, value: unknown) {
    this.headers[name] = value;
  }
  close() {
    this.closed = true;
    this.emit("close");
  }
}

describe("admit (docs/rate-limits.md)", () => {
  const contexts = new RequestContexts([]);
  const asking = { principal: "hash", account: "team-search", workspace: "acme", asksWorkspace: true };
  /** A request's context, over a response that closes when told to. */
  const request = () => {
    const response = new FakeResponse();
    const context = contexts.open({ headers: {}, url: "/v1/chat/completions" } as IncomingMessage, response as unknown as ServerResponse);
    return Object.assign(context, { response });
  };
  /** Rate limits of `values` (e.g. `{ RATE_LIMIT_RPM: "1" }`) counted in process. */
  const limitsOf = (values: Record<string, string>) => new RateLimits(loadConfig(values).limits.rate as RateLimitSettings, new MemoryLimitCounters(60));

  it("takes the caps first: over them it refuses, before the key's limits count anything", async () => {
    const options = { limit: new ConcurrencyLimit(1, 1), rateLimits: limitsOf({ RATE_LIMIT_RPM: "10" }) };
    const first = request();
    await admit(first, asking, options);
    await expect(admit(request(), asking, options)).rejects.toThrow(RateLimitError);
    first.response.close();
    const next = await admit(request(), asking, options);
    // The refused request was never counted: the second admitted one is the key's second of ten.
    expect(next.headers["x-ratelimit-remaining-requests"]).toBe("8");
  });

  it("over the key's limits, rejects with the place under the caps taken, given back when its response closes", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_RPM: "1" }) };
    await admit(request(), asking, options);
    const refused = request();
    await expect(admit(refused, asking, options)).rejects.toBeInstanceOf(RateLimitError);
    expect(options.limit.inFlight).toBe(2);
    refused.response.close();
    expect(options.limit.inFlight).toBe(1);
  });

  it("counts nothing against the key's limits for a request that asks the workspace nothing", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_RPM: "1" }) };
    for (let index = 0; index < 3; index += 1) {
      const admitted = await admit(request(), { ...asking, asksWorkspace: false }, options);
      expect(admitted.headers).toEqual({});
    }
    const counted = await admit(request(), asking, options);
    expect(counted.headers["x-ratelimit-remaining-requests"]).toBe("0");
  });

  it("gives back what it holds once, however often the response ends or the release is called", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_CONCURRENT: "1" }) };
    const held = request();
    const admitted = await admit(held, asking, options);
    await admit(request(), { ...asking, asksWorkspace: false }, options);
    expect(options.limit.inFlight).toBe(2);
    held.response.emit("prefinish");
    admitted.release();
    held.response.close();
    admitted.release();
    expect(options.limit.inFlight).toBe(1);
    // The key's one concurrent slot is free again (once: a second release would not free another).
    await admit(request(), asking, options);
    await expect(admit(request(), asking, options)).rejects.toBeInstanceOf(RateLimitError);
  });

  it("once handed over, is no longer given back by its response's end, but by the release handed over, once", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_CONCURRENT: "1" }) };
    const started = request();
    const admitted = await admit(started, asking, options);
    const release = admitted.handOver();
    started.response.emit("prefinish");
    started.response.close();
    expect(options.limit.inFlight).toBe(1);
    await expect(admit(request(), asking, options)).rejects.toBeInstanceOf(RateLimitError);
    release();
    release();
    expect(options.limit.inFlight).toBe(1); // the refused request's response never closed
    await admit(request(), asking, options);
  });

  it("when its response closed before the hand-over, was given back then: the release handed over does nothing more", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10) };
    const gone = request();
    const admitted = await admit(gone, asking, options);
    gone.response.close();
    expect(options.limit.inFlight).toBe(0);
    admitted.handOver()();
    expect(options.limit.inFlight).toBe(0);
  });

  it("needs no HTTP response: a detached request's context gives back what it holds when it ends", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_CONCURRENT: "1" }) };
    const message = contexts.detached();
    await admit(message, asking, options);
    expect(message.facts.account).toBe("team-search");
    await expect(admit(contexts.detached(), asking, options)).rejects.toBeInstanceOf(RateLimitError);
    message.close(true);
    expect(options.limit.inFlight).toBe(1); // the refused one never ended
    await admit(contexts.detached(), asking, options);
  });
});
