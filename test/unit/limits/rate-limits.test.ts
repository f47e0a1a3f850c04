import { describe, expect, it } from "vitest";
import { loadConfig, type RateLimitSettings } from "../../../src/config/config.js";
import { RateLimitError } from "../../../src/errors/adapter-error.js";
import {
  type CountedRequest,
  type HeldQuota,
  type LimitCounters,
  MemoryLimitCounters,
  type QuotaReservation,
  type ReservedTokens,
  type Slot,
  type WindowCount,
} from "../../../src/limits/limit-counters.js";
import { fitsQuotas, type QuotaLimit } from "../../../src/limits/quota-counts.js";
import type { QuotaPeriod } from "../../../src/limits/quota-periods.js";
import { resetDuration } from "../../../src/limits/limit-headers.js";
import { RateLimits } from "../../../src/limits/rate-limits.js";

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

  async reserveTokens(key: string, limit: number, tokens: number): Promise<ReservedTokens> {
    this.calls.push(`reserve ${key} ${limit} ${tokens}`);
    const { used } = this.tokens;
    const reserved = used < limit && used + tokens <= limit;
    return { ...this.tokens, reserved, adjust: (delta) => void (reserved && delta !== 0 && this.calls.push(`adjust ${key} ${delta}`)) };
  }

  chargeTokens(key: string, limit: number, tokens: number): void {
    this.calls.push(`charge ${key} ${limit} ${tokens}`);
  }

  async quotaUsed(key: string, periods: readonly QuotaPeriod[]): Promise<number[]> {
    return periods.map((period) => this.quotas[period.kind]);
  }

  async reserveQuota(key: string, id: string, quotas: readonly QuotaLimit[], tokens: number): Promise<QuotaReservation> {
    this.calls.push(`reserve quota ${key} ${quotas.map(({ period, limit }) => `${period.id}/${limit}`).join(" ")} ${tokens}`);
    const used = quotas.map(({ period }) => this.quotas[period.kind]);
    const reserved = fitsQuotas(quotas, used, tokens);
    return {
      reserved,
      used,
      settle: (charged, periods) => void (reserved && this.calls.push(`settle quota ${key} ${id.length > 0} ${charged} ${periods.map((period) => period.id).join(" ")}`)),
    };
  }

  settleQuota(key: string, held: HeldQuota, tokens: number, periods: readonly QuotaPeriod[]): void {
    this.calls.push(`settle held ${key} ${held.id} ${held.tokens} ${held.periods.map((period) => period.id).join(" ")} ${tokens} ${periods.map((period) => period.id).join(" ")}`);
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

/** A question of 40 bytes (10 tokens as the reservation estimates them) in mode `ask`, whose answer is expected at 500 tokens. */
const ASK = { mode: "ask" as const, prompt: "How many days of annual leave do I get?!", choices: 1 };

describe("admission", () => {
  it("counts the request, reserves the expected tokens and takes a slot under the key's hash tag, and says what is left", async () => {
    const counters = new FakeCounters();
    counters.requests = { counted: true, used: 3, resetMs: 41_250 };
    counters.tokens = { used: 1200, resetMs: 59_000 };
    const limits = new RateLimits(settings({ RATE_LIMIT_RPM: "10", RATE_LIMIT_TPM: "5000", RATE_LIMIT_CONCURRENT: "2" }), counters);
    const admission = await limits.take("hash", "acme", { rpm: 10, tpm: 5000, concurrent: 2 }, ASK);
    expect(counters.calls).toEqual(["count {hash:acme} 10", "reserve {hash:acme} 5000 510", "slot {hash:acme} 2"]);
    expect(admission.headers).toEqual({
      "x-ratelimit-limit-requests": "10",
      "x-ratelimit-remaining-requests": "7",
      "x-ratelimit-reset-requests": "41.25s",
      "x-ratelimit-limit-tokens": "5000",
      "x-ratelimit-remaining-tokens": "3290",
      "x-ratelimit-reset-tokens": "59s",
    });
    expect(admission.countsTokens).toBe(true);
    // Settled within the minute it was reserved in: the reservation becomes the answer's count.
    admission.settle(321);
    admission.settle(321);
    admission.release();
    expect(counters.calls.slice(3)).toEqual(["adjust {hash:acme} -189", "release {hash:acme}"]);
  });

  it("estimates an answer's cost from its prompt's UTF-8 size and its mode's expected answer, per choice", () => {
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "100000", RATE_LIMIT_ANSWER_TOKENS: "reason:2000" }), new FakeCounters());
    expect(limits.expectedTokens(ASK)).toBe(510);
    expect(limits.expectedTokens({ ...ASK, mode: "reason", choices: 3 })).toBe(3 * 2010);
    // Four bytes a token: a character of three bytes counts for three quarters of one.
    expect(limits.expectedTokens({ mode: "build", prompt: "年休".repeat(10), choices: 1 })).toBe(15 + 3000);
  });

  it("sends only the headers of the limits that apply, and reserves nothing without a tokens limit", async () => {
    const counters = new FakeCounters();
    const limits = new RateLimits(settings({ RATE_LIMIT_CONCURRENT: "2" }), counters);
    const admission = await limits.take("hash", "acme", { concurrent: 2 }, ASK);
    expect(admission.headers).toEqual({});
    expect(admission.countsTokens).toBe(false);
    expect(admission.held).toBeUndefined();
    admission.settle(100);
    expect(counters.calls).toEqual(["slot {hash:acme} 2"]);
  });

  it("refuses a request past its requests per minute with the window's wait, and gives back its slot and its reservation", async () => {
    const counters = new FakeCounters();
    counters.requests = { counted: false, used: 11, resetMs: 12_345.4 };
    const limited: string[] = [];
    const limits = new RateLimits(settings({ RATE_LIMIT_RPM: "10", RATE_LIMIT_CONCURRENT: "2", RATE_LIMIT_TPM: "5000" }), counters, {
      onLimited: (kind, workspace) => limited.push(`${kind} ${workspace}`),
    });
    const error = await refusal(limits.take("hash", "acme", { rpm: 10, concurrent: 2, tpm: 5000 }, ASK));
    expect(error.status).toBe(429);
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.type).toBe("rate_limit_error");
    expect(error.message).toBe(
      "Rate limit reached for this key in workspace 'acme' on requests per minute (RPM): limit 10. Please try again in 12.346s.",
    );
    expect(error.detail).toBe(error.message);
    expect(error.headers).toMatchObject({
      "x-ratelimit-limit-requests": "10",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "12.346s",
      "retry-after": "13",
      "retry-after-ms": "12346",
    });
    expect(counters.calls).toContain("release {hash:acme}");
    expect(counters.calls).toContain("adjust {hash:acme} -510");
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

  it("refuses when the reservation does not fit in the window's tokens (as OpenAI words it), and tells the longest wait of several limits", async () => {
    const counters = new FakeCounters();
    counters.tokens = { used: 4600, resetMs: 30_000 };
    counters.slotFree = false;
    const limited: string[] = [];
    const limits = new RateLimits(settings({ RATE_LIMIT_TPM: "5000" }), counters, { onLimited: (kind) => limited.push(kind) });
    const error = await refusal(limits.take("hash", "acme", { tpm: 5000, concurrent: 1 }, ASK));
    expect(error.message).toMatch(/on tokens per minute \(TPM\): limit 5000, used 4600, requested 510; answers in flight: limit 1\. Please try again in 30s\./);
    expect(error.headers).toMatchObject({ "x-ratelimit-remaining-tokens": "400", "retry-after": "30", "retry-after-ms": "30000" });
    expect(limited).toEqual(["tpm"]);
  });

  it("says so when a request asks more than the limit holds at all", async () => {
    const counters = new FakeCounters();
    const limits = new RateLimits(settings({ RATE_LIMIT_TPM: "300" }), counters);
    const error = await refusal(limits.take("hash", "acme", { tpm: 300 }, ASK));
    expect(error.message).toMatch(/on tokens per minute \(TPM\): limit 300, used 0, requested 510 \(more than the limit holds: a shorter prompt, or fewer choices\)\./);
  });

  it("settles an answer that ends in a later minute to that minute, whole", async () => {
    let now = 1_000_000;
    const counters = new FakeCounters();
    counters.tokens = { used: 0, resetMs: 60_000 };
    const limits = new RateLimits(settings({ RATE_LIMIT_TPM: "5000" }), counters, {}, { now: () => now });
    const admission = await limits.take("hash", "acme", { tpm: 5000 }, ASK);
    now += 61_000;
    admission.settle(700);
    expect(counters.calls.slice(1)).toEqual(["charge {hash:acme} 5000 700"]);
  });
});

describe("the token quotas per UTC day and month", () => {
  // 2026-11-23 22:00 UTC: two hours before the day ends, eight days before the month does.
  const evening = Date.UTC(2026, 10, 23, 22, 0, 0);
  const at = (now: number) => ({ now: () => now, newId: () => "r-1" });

  it("reserve the expected tokens in the day's and the month's counts with the other limits, and settle them to the answer's", async () => {
    const counters = new FakeCounters();
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "1000", RATE_LIMIT_TPMO: "20000" }), counters, {}, at(evening));
    const admission = await limits.take("hash", "acme", { tpd: 1000, tpmo: 20_000 }, ASK);
    expect(counters.calls).toEqual(["reserve quota {hash:acme} tpd:2026-11-23/1000 tpmo:2026-11/20000 510"]);
    expect(admission.countsTokens).toBe(true);
    expect(admission.held).toEqual({ id: "r-1", tokens: 510, at: evening });
    expect(admission.headers).toMatchObject({ "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "490" });
    admission.settle(120);
    expect(counters.calls).toContain("settle quota {hash:acme} true 120 tpd:2026-11-23 tpmo:2026-11");
  });

  it("refuse once the day's quota would be passed, until the day ends, with the tokens headers of the quota that binds", async () => {
    const counters = new FakeCounters();
    counters.quotas = { tpd: 600, tpmo: 5000 };
    const limited: string[] = [];
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "1000", RATE_LIMIT_TPMO: "20000" }), counters, { onLimited: (kind) => limited.push(kind) }, at(evening));
    const error = await refusal(limits.take("hash", "acme", { tpd: 1000, tpmo: 20_000 }, ASK));
    expect(error.message).toMatch(/on tokens per day \(TPD\): limit 1000, used 600, requested 510\. Please try again in 2h0m0s\./);
    expect(error.headers).toMatchObject({
      "x-ratelimit-limit-tokens": "1000",
      "x-ratelimit-remaining-tokens": "400",
      "x-ratelimit-reset-tokens": "2h0m0s",
      "retry-after": "7200",
    });
    expect(limited).toEqual(["tpd"]);
  });

  it("report the token limit with the least left in the headers: the minute's, or a quota's", async () => {
    const counters = new FakeCounters();
    counters.tokens = { used: 100, resetMs: 20_000 };
    counters.quotas = { tpd: 400, tpmo: 0 };
    const limits = new RateLimits(settings({ RATE_LIMIT_TPM: "5000", RATE_LIMIT_TPD: "1000" }), counters, {}, at(evening));
    const admission = await limits.take("hash", "acme", { tpm: 5000, tpd: 1000 }, ASK);
    expect(admission.headers).toMatchObject({ "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "90", "x-ratelimit-reset-tokens": "2h0m0s" });
    counters.quotas = { tpd: 0, tpmo: 0 };
    const fresh = await limits.take("hash", "acme", { tpm: 5000, tpd: 1000 });
    expect(fresh.headers).toMatchObject({ "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "1000" });
  });

  it("settle a reservation another replica held in the periods it was taken in, charging the periods the answer ends in", () => {
    const counters = new FakeCounters();
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "1000" }), counters, {}, at(Date.UTC(2026, 10, 24, 0, 5, 0)));
    limits.settleHeld("hash", "acme", { id: "r-9", tokens: 510, at: evening }, 300);
    expect(counters.calls).toEqual(["settle held {hash:acme} r-9 510 tpd:2026-11-23 300 tpd:2026-11-24"]);
  });

  it("count in process per period, a new day starting from nothing", async () => {
    let now = evening;
    const counters = new MemoryLimitCounters(60, () => now);
    const limits = new RateLimits(settings({ RATE_LIMIT_TPD: "1100" }), counters, {}, { now: () => now });
    const first = await limits.take("hash", "acme", { tpd: 1100 }, ASK);
    // Reserved, not yet settled: a second fits, a third does not.
    await limits.take("hash", "acme", { tpd: 1100 }, ASK);
    await refusal(limits.take("hash", "acme", { tpd: 1100 }, ASK));
    first.settle(70);
    const third = await limits.take("hash", "acme", { tpd: 1100 }, ASK);
    expect(third.headers["x-ratelimit-remaining-tokens"]).toBe("10");
    await refusal(limits.take("hash", "acme", { tpd: 1100 }, ASK));
    expect((await limits.take("other", "acme", { tpd: 1100 }, ASK)).headers["x-ratelimit-remaining-tokens"]).toBe("590");
    now = Date.UTC(2026, 10, 24, 0, 0, 0);
    const next = await limits.take("hash", "acme", { tpd: 1100 }, ASK);
    expect(next.headers).toMatchObject({ "x-ratelimit-remaining-tokens": "590", "x-ratelimit-reset-tokens": "24h0m0s" });
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

  it("reserve tokens in the window only when they fit, giving back what did not, and adjust a reservation to the answer's count", async () => {
    const counters = new MemoryLimitCounters(60);
    const first = await counters.reserveTokens("{a:acme}", 100, 70);
    expect(first).toMatchObject({ reserved: true, used: 0 });
    const over = await counters.reserveTokens("{a:acme}", 100, 40);
    expect(over).toMatchObject({ reserved: false, used: 70 });
    await new Promise((resolve) => setImmediate(resolve));
    expect((await counters.tokensUsed("{a:acme}", 100)).used).toBe(70);
    first.adjust(-50);
    over.adjust(10);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await counters.tokensUsed("{a:acme}", 100)).used).toBe(20);
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
