import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { loadConfig, type RateLimitSettings } from "../../../src/config/config.js";
import { RateLimitError } from "../../../src/errors/adapter-error.js";
import { type Admitted, admit } from "../../../src/http/admission.js";
import { RequestContexts } from "../../../src/http/request-context.js";
import { ConcurrencyLimit } from "../../../src/limits/concurrency-limit.js";
import { MemoryLimitCounters } from "../../../src/limits/limit-counters.js";
import { RateLimits } from "../../../src/limits/rate-limits.js";

/** A response that ends and closes when told to. */
class FakeResponse extends EventEmitter {
  statusCode = 200;
  closed = false;
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
  const facts = new RequestContexts([]);
  const asking = { principal: "hash", account: "team-search", workspace: "acme", asksWorkspace: true };
  const response = () => new FakeResponse() as unknown as ServerResponse & FakeResponse;
  /** Rate limits of `values` (e.g. `{ RATE_LIMIT_RPM: "1" }`) counted in process. */
  const limitsOf = (values: Record<string, string>) => new RateLimits(loadConfig(values).limits.rate as RateLimitSettings, new MemoryLimitCounters(60));

  it("takes the caps first: over them it refuses at once (a sync throw), before the key's limits count anything", async () => {
    const options = { limit: new ConcurrencyLimit(1, 1), rateLimits: limitsOf({ RATE_LIMIT_RPM: "10" }), facts };
    const first = response();
    await admit(first, asking, options);
    expect(() => admit(response(), asking, options)).toThrow(RateLimitError);
    first.close();
    const next = response();
    await admit(next, asking, options);
    // The refused request was never counted: the second admitted one is the key's second of ten.
    expect(next.headers["x-ratelimit-remaining-requests"]).toBe("8");
  });

  it("over the key's limits, rejects with the place under the caps taken, given back when its response closes", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_RPM: "1" }), facts };
    await admit(response(), asking, options);
    const refused = response();
    await expect(admit(refused, asking, options)).rejects.toBeInstanceOf(RateLimitError);
    expect(options.limit.inFlight).toBe(2);
    refused.close();
    expect(options.limit.inFlight).toBe(1);
  });

  it("counts nothing against the key's limits for a request that asks the workspace nothing", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_RPM: "1" }), facts };
    for (let index = 0; index < 3; index += 1) {
      const admitted = admit(response(), { ...asking, asksWorkspace: false }, options);
      expect(admitted).not.toBeInstanceOf(Promise);
    }
    const counted = response();
    await admit(counted, asking, options);
    expect(counted.headers["x-ratelimit-remaining-requests"]).toBe("0");
  });

  it("gives back what it holds once, however often the response ends or the release is called", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_CONCURRENT: "1" }), facts };
    const held = response();
    const admitted = await admit(held, asking, options);
    admit(response(), { ...asking, asksWorkspace: false }, options);
    expect(options.limit.inFlight).toBe(2);
    held.emit("prefinish");
    admitted.release();
    held.close();
    admitted.release();
    expect(options.limit.inFlight).toBe(1);
    // The key's one concurrent slot is free again (once: a second release would not free another).
    await admit(response(), asking, options);
    await expect(admit(response(), asking, options)).rejects.toBeInstanceOf(RateLimitError);
  });

  it("once handed over, is no longer given back by its response's end, but by the release handed over, once", async () => {
    const options = { limit: new ConcurrencyLimit(10, 10), rateLimits: limitsOf({ RATE_LIMIT_CONCURRENT: "1" }), facts };
    const started = response();
    const admitted = await admit(started, asking, options);
    const release = admitted.handOver();
    started.emit("prefinish");
    started.close();
    expect(options.limit.inFlight).toBe(1);
    await expect(admit(response(), asking, options)).rejects.toBeInstanceOf(RateLimitError);
    release();
    release();
    expect(options.limit.inFlight).toBe(1); // the refused request's response never closed
    await admit(response(), asking, options);
  });

  it("when its response closed before the hand-over, was given back then: the release handed over does nothing more", () => {
    const options = { limit: new ConcurrencyLimit(10, 10), facts };
    const gone = response();
    const admitted = admit(gone, asking, options) as Admitted;
    gone.close();
    expect(options.limit.inFlight).toBe(0);
    admitted.handOver()();
    expect(options.limit.inFlight).toBe(0);
  });
});
