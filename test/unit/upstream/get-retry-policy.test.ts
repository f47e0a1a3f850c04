import { describe, expect, it } from "vitest";
import { getRetryPolicy } from "../../../src/upstream/get-retry-policy.js";

describe("the GET retry policy", () => {
  const policy = getRetryPolicy(2);

  it("retries reads only, never a create", () => {
    expect(policy.retriesMethod("GET")).toBe(true);
    expect(policy.retriesMethod("POST")).toBe(false);
    expect(policy.retries).toBe(2);
  });

  it("retries 502, 503 and 504, never a 429, 500 or a client error", () => {
    expect([502, 503, 504].map((status) => policy.retriesStatus(status))).toEqual([true, true, true]);
    expect([200, 400, 401, 404, 408, 429, 500].map((status) => policy.retriesStatus(status))).toEqual([false, false, false, false, false, false, false]);
  });

  it("retries connection errors by their code, not timeouts of a sent request nor unknown errors", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT"]) {
      expect(policy.retriesError(Object.assign(new Error(code), { code }))).toBe(true);
    }
    expect(policy.retriesError(Object.assign(new Error("headers"), { code: "UND_ERR_HEADERS_TIMEOUT" }))).toBe(false);
    expect(policy.retriesError(new Error("plain"))).toBe(false);
    expect(policy.retriesError(null)).toBe(false);
  });

  it("waits a fully jittered, exponentially growing, capped time", () => {
    expect(policy.delayMs(0, () => 0)).toBe(0);
    expect(policy.delayMs(0, () => 0.5)).toBe(25);
    expect(policy.delayMs(1, () => 0.5)).toBe(50);
    expect(policy.delayMs(2, () => 0.5)).toBe(100);
    expect(policy.delayMs(10, () => 0.999)).toBeLessThan(1000);
    expect(policy.delayMs(10, () => 0.5)).toBe(500);
  });
});
