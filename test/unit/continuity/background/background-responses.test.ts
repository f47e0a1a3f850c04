import pino from "pino";
import { describe, expect, it } from "vitest";
import type { BackgroundEncoder } from "../../../../src/continuity/background/background-log.js";
import { BackgroundResponses } from "../../../../src/continuity/background/background-responses.js";
import { type BackgroundStore, MemoryBackgroundStore } from "../../../../src/continuity/background/background-store.js";
import { manualClock } from "../../../helpers/manual-clock.js";

// A background answer's lease (docs/responses-api.md#background-mode) is renewed while it runs
// here and never after (issue 56, code review §2.4 #4): a renewal in flight when its log closes
// (say after a final write Redis did not take) must not arm another, or this replica would hold
// the lease of an answer it no longer runs, which no other replica could then take over or end.

/** The store, with its lease calls counted and, while `hold` is set, kept waiting until it is let go. */
function heldStore(store: MemoryBackgroundStore) {
  const state = { leases: 0, hold: undefined as Promise<void> | undefined };
  const held = new Proxy(store, {
    get(target, name, receiver) {
      if (name === "lease") {
        return async (...args: Parameters<BackgroundStore["lease"]>) => {
          state.leases += 1;
          await state.hold;
          return target.lease(...args);
        };
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: held as BackgroundStore, state };
}

const record = { id: "resp_lease", principal: "p", workspace: "acme", queryId: "q-1", response: { status: "in_progress" }, resume: null };
const encoder = { open: () => [] } as unknown as BackgroundEncoder;
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("BackgroundResponses' lease renewal", () => {
  it("renews while the answer runs here, and stops with its log, a renewal in flight then included", async () => {
    const clock = manualClock();
    const { store, state } = heldStore(new MemoryBackgroundStore(10, clock.now));
    const responses = new BackgroundResponses({ store, clock, logger: pino({ level: "silent" }), ttlSeconds: 60, replica: "me", leaseMs: 3000, followPollMs: 10 });
    const log = await responses.open(record, encoder, new AbortController());
    expect(state.leases).toBe(1);
    clock.runAll();
    await settle();
    expect(state.leases).toBe(2);
    expect(clock.pending).toBe(1);

    let letGo!: () => void;
    state.hold = new Promise((resolve) => {
      letGo = resolve;
    });
    clock.runAll();
    await settle();
    expect(state.leases).toBe(3);
    // The answer stops running here while that renewal waits for the store.
    log.close();
    letGo();
    await settle();
    await settle();
    expect(clock.pending).toBe(0);
    clock.runAll();
    await settle();
    expect(state.leases).toBe(3);
    expect(responses.inFlight).toBe(0);
  });
});
