import { describe, expect, it } from "vitest";
import { loadConfig, type RateLimitSettings } from "../../../src/config/config.js";
import { RateLimitError } from "../../../src/errors/adapter-error.js";
import { type CountedRequest, type LimitCounters, MemoryLimitCounters, type Slot, type WindowCount } from "../../../src/limits/limit-counters.js";
import type { QuotaPeriod } from "../../../src/limits/quota-periods.js";
import { RateLimits, resetDuration } from "../../../src/limits/rate-limits.js";

/** Counters whose answers a test sets, recording what was asked of them. */
class FakeCounters implements LimitCounters {
  readonly calls: string[] = [];
  requests: WindowCount & { counted: boolean } = { counted: true, used: 1, resetMs: 30_000 };
  tokens: WindowCount = { used: 0, resetMs: 0 };
  quotas = { tpd: 0, tpmo: 0 };
  slotFree = true;
  slotsHeld = 0;
  shared = true;

  async countRequest(key: string, limit: number): Promise<CountedRequest> {
    this.calls.push(`count ${key} ${limit}`);
    return { ...this.requests, uncount: () => this.calls.push(`uncount ${key}`) };
  }

  async tokensUsed(key: string, limit: number): Promise<WindowCount> {
    this.calls.push(`tokens ${key} ${limit}`);
    return this.tokens;
  }

  chargeTokens(key: string, limit: number, tokens: number): void {
    this.calls.push(`charge ${key} ${limit} ${tokens}`);
  }

  async quotaUsed(key: string, periods: readonly QuotaPeriod[]): Promise<number[]> {
    this.calls.push(`quota ${key} ${periods.map((period) => period.id).join(" ")}`);
    return periods.map((period) => this.quotas[period.kind]);
  }

  chargeQuota(key: string, periods: readonly QuotaPeriod[], tokens: number): void {
    this.calls.push(`charge quota ${key} ${periods.map((period) => period.id).join(" ")} ${tokens}`);
  }

  async takeSlot(key: string, limit: number): Promise<Slot | null> {
    this.calls.push(`slot ${key} ${limit}`);
    if (!this.slotFree) return null;
    this.slotsHeld += 1;
    return { release: () => this.calls.push(`release ${key}`) };
  }

  async close(): Promise<void> {}
}

function settings(environment: Record<string, string>): RateLimitSettings {
  const limits = loadConfig(environment).limits.rate;
  if (!limits) throw new Error("no limits");
  return limits;
}

async function refusal(promise: Promise<unknown>): Promise<RateLimitError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RateLimitError);
  return error as RateLimitError;
}

describe("the limits of a workspace", () => {
  it("are the defaults, or the workspace's override over them; none is undefined", () => {
    const limits = new RateLimits(
      settings({ RATE_LIMIT_RPM: "60", RATE_LIMIT_OVERRIDES: "acme=concurrent:3;free=rpm:off;busy=rpm:600,tpm:1000" }),
      new FakeCounters(),
    );
    expect(limits.limitsOf("other")).toEqual({ rpm: 60 });
    expect(limits.limitsOf("acme")).toEqual({ rpm: 60, concurrent: 3 });
    expect(limits.limitsOf("free")).toBeUndefined();
    expect(limits.limitsOf("busy")).toEqual({ rpm: 600, tpm: 1000 });
  });
});

describe("admission", () => {
  it("counts the request, reads the tokens and takes a slot under the key's hash tag, and says what is left", async () => {
    const counters = new FakeCounters();
    counters.requests = { counted: true, used: 3, resetMs: 41_250 };
    counters.tokens = { used: 1200, resetMs: 59_000 };
    const limits = new RateLimits(settings({ RATE_LIMIT_RPM: "10", RATE_LIMIT_TPM: "5000", RATE_LIMIT_CONCURRENT: "2" }), counters);
    const admission = await limits.take("hash", "acme", { rpm: 10, tpm: 5000, concurrent: 2 });
    expect(counters.calls).toEqual(["count {hash:acme} 10", "tokens {hash:acme} 5000", "slot {hash:acme} 2"]);
    expect(admission.headers).toEqual({
      "x-ratelimit-limit-requests": "10",
      "x-ratelimit-remaining-requests": "7",
      "x-ratelimit-reset-requests": "41.25s",
      "x-ratelimit-limit-tokens": "5000",
      "x-ratelimit-remaining-tokens": "3800",
      "x-ratelimit-reset-tokens": "59s",
    });
    expect(admission.countsTokens).toBe(true);
    admission.charge(321);
    admission.release();
    expect(counters.calls.slice(3)).toEqual(["charge {hash:acme} 5000 321", "release {hash:acme}"]);
  });

  it("sends only the headers of the limits that apply, and charges nothing without a tokens limit", async () => {
    const counters = new FakeCounters();
    const limits = new RateLimits(settings({ RATE_LIMIT_CONCURRENT: "2" }), counters);
    const admission = await limits.take("hash", "acme", { concurrent: 2 });
    expect(admission.headers).toEqual({});
    expect(admission.countsTokens).toBe(false);
    admission.charge(100);
    expect(counters.calls).toEqual(["slot {hash:acme} 2"]);
  });

  it("refuses a request past its requests per minute with the window's wait, and gives back its slot", async () => {
    const counters = new FakeCounters();
    counters.requests = { counted: false, used: 11, resetMs: 12_345.4 };
    const limited: string[] = [];
    const limits = new RateLimits(settings({ RATE_LIMIT_RPM: "10", RATE_LIMIT_CONCURRENT: "2" }), counters, {
      onLimited: (kind, workspace) => limited.push(`${kind} ${workspace}`),
    });
    const error = await refusal(limits.take("hash", "acme", { rpm: 10, concurrent: 2 }));
    expect(error.status).toBe(429);
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.type).toBe("rate_limit_error");
    expect(error.message).toBe(
      "Rate limit reached for this key in workspace 'acme' on requests per minute (RPM): limit 10. Please try again in 12.346s.",
    );
    expect(error.detail).toBe(error.message);
    expect(error.headers).toEqual({
      "x-ratelimit-limit-requests": "10",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "12.346s",
      "retry-after": "13",
      "retry-after-ms": "12346",
    });
    expect(counters.calls).toContain("release {hash:acme}");
    expect(counters.calls).not.toContain("uncount {hash:acme}");
    expect(limited).toEqual(["rpm acme"]);
  });

  it("refuses a request when every slot is held, without counting it against the requests per minute", async () => {
    const counters = new FakeCounters();
    counters.slotFree = false;
    counters.requests = { counted: true, used: 4, resetMs: 50_000 };
    const limits = new RateLimits(settings({ RATE_LIMIT_RPM: "10", RATE_LIMIT_CONCURRENT: "1" }), counters);
    const error = await refusal(limits.take("hash", "acme", { rpm: 10, concurrent: 1 }));
    expect(error.message).toMatch(/on answers in flight: limit 1\. Please try again in 1s\./);
    expect(error.headers).toMatchObject({ "retry-after": "1", "retry-after-ms": "1000", "x-ratelimit-remaining-requests": "7" });
    expect(counters.calls).toContain("uncount {hash:acme}");
  });

  it("refuses while the tokens of the window have reached the limit, and tells the longest wait of several limits", async () => {
    const counters = new FakeCounters();
    counters.tokens = { used: 5000, resetMs: 30_000 };
    counters.slotFree = false;
    const limited: string[] = [];
    const limits = new RateLimits(settings({ RATE_LIMIT_TPM: "5000" }), counters, { onLimited: (kind) => limited.push(kind) });
    const error = await refusal(limits.take("hash", "acme", { tpm: 5000, concurrent: 1 }));
    expect(error.message).toMatch(/on tokens per minute \(TPM\): limit 5000; answers in flight: limit 1\. Please try again in 30s\./);
    expect(error.headers).toMatchObject({ "x-ratelimit-remaining-tokens": "0", "retry-after": "30", "retry-after-ms": "30000" });
    expect(limited).toEqual(["tpm"]);
  });
});

describe("the token quotas per UTC day and month", () => {
  // 2026-11-23 22:00 UTC: two hours before the day ends, eight days before the month does.
  const evening = Date.UTC(2026, 10, 23, 22, 0, 0);

  it("read the day's and the month's counts with the other limits, and name their periods", async () => {
    const counters = new FakeCounters();
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "1000", RATE_LIMIT_TPMO: "20000" }), counters, {}, () => evening);
    const admission = await limits.take("hash", "acme", { tpd: 1000, tpmo: 20_000 });
    expect(counters.calls).toEqual(["quota {hash:acme} tpd:2026-11-23 tpmo:2026-11"]);
    expect(admission.countsTokens).toBe(true);
    admission.charge(120);
    expect(counters.calls).toContain("charge quota {hash:acme} tpd:2026-11-23 tpmo:2026-11 120");
  });

  it("refuse once the day's quota is reached, until the day ends, with the tokens headers of the quota that binds", async () => {
    const counters = new FakeCounters();
    counters.quotas = { tpd: 1000, tpmo: 5000 };
    const limited: string[] = [];
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "1000", RATE_LIMIT_TPMO: "20000" }), counters, { onLimited: (kind) => limited.push(kind) }, () => evening);
    const error = await refusal(limits.take("hash", "acme", { tpd: 1000, tpmo: 20_000 }));
    expect(error.message).toMatch(/on tokens per day \(TPD\): limit 1000\. Please try again in 2h0m0s\./);
    expect(error.headers).toMatchObject({
      "x-ratelimit-limit-tokens": "1000",
      "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-tokens": "2h0m0s",
      "retry-after": "7200",
    });
    expect(limited).toEqual(["tpd"]);
  });

  it("report the token limit with the least left in the headers: the minute's, or a quota's", async () => {
    const counters = new FakeCounters();
    counters.tokens = { used: 100, resetMs: 20_000 };
    counters.quotas = { tpd: 900, tpmo: 0 };
    const limits = new RateLimits(settings({ RATE_LIMIT_TPM: "5000", RATE_LIMIT_TPD: "1000" }), counters, {}, () => evening);
    const admission = await limits.take("hash", "acme", { tpm: 5000, tpd: 1000 });
    expect(admission.headers).toMatchObject({ "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "2h0m0s" });
    counters.quotas = { tpd: 0, tpmo: 0 };
    const fresh = await limits.take("hash", "acme", { tpm: 5000, tpd: 1000 });
    expect(fresh.headers).toMatchObject({ "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "1000" });
  });

  it("count in process per period, a new day starting from nothing", async () => {
    let now = evening;
    const counters = new MemoryLimitCounters(60, () => now);
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "100" }), counters, {}, () => now);
    (await limits.take("hash", "acme", { tpd: 100 })).charge(100);
    await refusal(limits.take("hash", "acme", { tpd: 100 }));
    await refusal(limits.take("hash", "acme", { tpd: 100 }));
    expect((await limits.take("other", "acme", { tpd: 100 })).headers["x-ratelimit-remaining-tokens"]).toBe("100");
    now = Date.UTC(2026, 10, 24, 0, 0, 0);
    const next = await limits.take("hash", "acme", { tpd: 100 });
    expect(next.headers).toMatchObject({ "x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "24h0m0s" });
  });
});

describe("the in-process counters (rate-limiter-flexible's memory limiter)", () => {
  it("count a key's requests down to the limit in its window, per key", async () => {
    const counters = new MemoryLimitCounters(60);
    const results = [];
    for (let index = 0; index < 4; index += 1) results.push(await counters.countRequest("{a:acme}", 3));
    expect(results.map((result) => [result.counted, result.used])).toEqual([[true, 1], [true, 2], [true, 3], [false, 4]]);
    expect(results[3]?.resetMs).toBeGreaterThan(59_000);
    expect((await counters.countRequest("{b:acme}", 3)).used).toBe(1);
    expect((await counters.countRequest("{a:globex}", 3)).used).toBe(1);
  });

  it("take a request back once, however often asked", async () => {
    const counters = new MemoryLimitCounters(60);
    await counters.countRequest("{a:acme}", 2);
    const second = await counters.countRequest("{a:acme}", 2);
    second.uncount();
    second.uncount();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await counters.countRequest("{a:acme}", 2)).used).toBe(2);
  });

  it("start a new window when the old one ends", async () => {
    const counters = new MemoryLimitCounters(1);
    await counters.countRequest("{a:acme}", 1);
    const refused = await counters.countRequest("{a:acme}", 1);
    expect(refused.counted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, refused.resetMs + 20));
    expect((await counters.countRequest("{a:acme}", 1)).counted).toBe(true);
  });

  it("add charged tokens to the window", async () => {
    const counters = new MemoryLimitCounters(60);
    // Reading the tokens starts the key's window, as its first request does.
    expect(await counters.tokensUsed("{a:acme}", 100)).toEqual({ used: 0, resetMs: 60_000 });
    counters.chargeTokens("{a:acme}", 100, 40.5);
    counters.chargeTokens("{a:acme}", 100, 0);
    await new Promise((resolve) => setImmediate(resolve));
    const used = await counters.tokensUsed("{a:acme}", 100);
    expect(used.used).toBe(41);
    expect(used.resetMs).toBeGreaterThan(59_000);
  });

  it("hold at most the limit of slots per key, each freed once", async () => {
    const counters = new MemoryLimitCounters(60);
    const first = await counters.takeSlot("{a:acme}", 2);
    const second = await counters.takeSlot("{a:acme}", 2);
    expect(await counters.takeSlot("{a:acme}", 2)).toBeNull();
    expect(await counters.takeSlot("{a:globex}", 2)).not.toBeNull();
    expect(counters.slotsHeld).toBe(3);
    first?.release();
    first?.release();
    expect(counters.slotsHeld).toBe(2);
    expect(await counters.takeSlot("{a:acme}", 2)).not.toBeNull();
    expect(await counters.takeSlot("{a:acme}", 2)).toBeNull();
    second?.release();
    expect(counters.slotsHeld).toBe(2);
  });
});

describe("resetDuration", () => {
  it("writes durations as OpenAI's reset headers do", () => {
    expect(resetDuration(0)).toBe("0ms");
    expect(resetDuration(19.2)).toBe("20ms");
    expect(resetDuration(1000)).toBe("1s");
    expect(resetDuration(1500)).toBe("1.5s");
    expect(resetDuration(59_999)).toBe("59.999s");
    expect(resetDuration(60_000)).toBe("1m0s");
    expect(resetDuration(360_000)).toBe("6m0s");
    expect(resetDuration(3_600_000)).toBe("1h0m0s");
    expect(resetDuration(18_182_500)).toBe("5h3m2.5s");
    expect(resetDuration(-5)).toBe("0ms");
  });
});
