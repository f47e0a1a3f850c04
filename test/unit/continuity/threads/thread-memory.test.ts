import pino from "pino";
import { describe, expect, it } from "vitest";
import { ThreadMemory } from "../../../../src/continuity/threads/thread-memory.js";
import { ServiceUnavailableError } from "../../../../src/errors/adapter-error.js";
import type { ThreadStore } from "../../../../src/continuity/threads/thread-store.js";
import { retryBriefly } from "../../../../src/util/retry-briefly.js";

/** Timers that fire on the next turn of the event loop: retries without real waiting. */
const instantClock = { setTimeout: (callback: () => void) => setImmediate(callback), clearTimeout: (handle: unknown) => clearImmediate(handle as NodeJS.Immediate) };
/** The real timers. */
const realClock = { setTimeout: (callback: () => void, ms: number) => setTimeout(callback, ms), clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout) };

/** A store whose writes fail `failures` times before succeeding, and whose lookups fail while `lookupsFail`. */
function flakyStore(failures: number, lookupsFail = false) {
  let left = failures;
  const writes: string[] = [];
  const store: ThreadStore = {
    get: async () => {
      if (lookupsFail) throw new Error("Command timed out");
      return null;
    },
    set: async (key) => {
      writes.push(key);
      if (left > 0) {
        left -= 1;
        throw new Error("Command timed out");
      }
    },
    close: async () => undefined,
  };
  return { store, writes };
}

/** A logger that keeps what it wrote. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const scope = { principal: "p", workspace: "acme" };
const settings = { ttlSeconds: 60, clock: instantClock, writeWaitMs: 1000 };
const firstTurn = [{ role: "user" as const, text: "leave?" }];
const laterTurn = [...firstTurn, { role: "assistant" as const, text: "25 days." }, { role: "user" as const, text: "carry over?" }];

describe("ThreadMemory", () => {
  it("refuses a continuation whose lookup fails with a 503 to retry, and never calls the store for a first turn", async () => {
    const { logger } = recordingLogger();
    let refused = 0;
    const threads = new ThreadMemory(flakyStore(0, true).store, { ...settings, logger, onRefused: () => (refused += 1) });
    expect(await threads.find(scope, { conversationId: undefined, messages: firstTurn })).toBeNull();
    for (const hints of [
      { conversationId: undefined, messages: laterTurn },
      { conversationId: "conv-1", messages: firstTurn },
    ]) {
      const error = await threads.find(scope, hints).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(error).toMatchObject({ status: 503, code: "conversation_unavailable", headers: { "retry-after": "1" } });
    }
    expect(refused).toBe(2);
  });

  it("retries a turn's write that failed in the background, and counts it", async () => {
    const { logger, lines } = recordingLogger();
    const { store, writes } = flakyStore(2);
    let remembered!: (outcome: string) => void;
    const outcome = new Promise<string>((resolve) => (remembered = resolve));
    const threads = new ThreadMemory(store, { ...settings, logger, onWrite: remembered });
    await threads.remember(scope, { conversationId: undefined, messages: firstTurn }, { promptIndex: 0, answer: "25 days.", queryId: "q-1" });
    expect(writes.length).toBeGreaterThanOrEqual(1); // the answer ends once the first write was answered
    expect(await outcome).toBe("retried");
    expect(writes).toHaveLength(3);
    expect(lines).toEqual([]);
  });

  it("logs a turn it could not store with its query id, and counts it lost", async () => {
    const { logger, lines } = recordingLogger();
    let remembered!: (outcome: string) => void;
    const outcome = new Promise<string>((resolve) => (remembered = resolve));
    const threads = new ThreadMemory(flakyStore(100).store, { ...settings, logger, onWrite: remembered });
    await threads.remember(scope, { conversationId: "c", messages: firstTurn }, { promptIndex: 0, answer: "25 days.", queryId: "q-lost" });
    expect(await outcome).toBe("lost");
    expect(lines).toMatchObject([{ queryId: "q-lost", msg: expect.stringContaining("conversation turn lost") }]);
  });

  it("waits for a turn's write before the answer ends, but no longer than its bound", async () => {
    const { logger } = recordingLogger();
    let finish!: () => void;
    const slow: ThreadStore = { get: async () => null, set: () => new Promise<void>((resolve) => (finish = resolve)), close: async () => undefined };
    const threads = new ThreadMemory(slow, { ...settings, logger, clock: realClock, writeWaitMs: 200 });
    let ended = false;
    const remembered = threads.remember(scope, { conversationId: undefined, messages: firstTurn }, { promptIndex: 0, answer: "a", queryId: "q" }).then(() => (ended = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ended).toBe(false);
    finish();
    await remembered;
    const stuck: ThreadStore = { get: async () => null, set: () => new Promise<void>(() => undefined), close: async () => undefined };
    const started = performance.now();
    await new ThreadMemory(stuck, { ...settings, logger, clock: realClock, writeWaitMs: 100 }).remember(
      scope,
      { conversationId: undefined, messages: firstTurn },
      { promptIndex: 0, answer: "a", queryId: "q" },
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });
});

describe("retryBriefly", () => {
  it("tries again when woken, without waiting for the delay", async () => {
    let attempts = 0;
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const never = { setTimeout: () => undefined };
    const { outcome } = retryBriefly(
      async () => {
        attempts += 1;
        if (attempts === 1) throw new Error("down");
      },
      [60_000],
      never,
      () => woken,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(attempts).toBe(1);
    wake();
    expect(await outcome).toEqual({ outcome: "retried" });
  });
});
