import { describe, expect, it } from "vitest";
import { MemoryBackgroundStore, UNNUMBERED } from "../../../../src/continuity/background/background-store.js";

// The in-process store of background responses (docs/responses-api.md#background-mode).

const record = (id: string) => ({ id, principal: "p", workspace: "w", queryId: "q", response: { status: "in_progress" }, resume: {} });
const frame = (n: number, type = "response.output_text.delta") => ({ event: type, data: { type, sequence_number: n } });

describe("MemoryBackgroundStore", () => {
  it("appends until the response ends, numbers an unnumbered terminal frame, and appends nothing after", async () => {
    let now = 0;
    const store = new MemoryBackgroundStore(10, () => now);
    await store.create(record("resp_a"), 60);
    expect(await store.append("resp_a", [frame(0), frame(1)], 60, "me")).toBe(true);
    const cancelled = { event: "response.incomplete", data: { type: "response.incomplete", sequence_number: UNNUMBERED } };
    expect(await store.end("resp_a", { status: "cancelled" }, [cancelled], 60)).toBe(true);
    expect(await store.end("resp_a", { status: "completed" }, [frame(3)], 60)).toBe(false);
    expect(await store.append("resp_a", [frame(3)], 60, "me")).toBe(false);
    expect((await store.events("resp_a", 0)).map((entry) => (entry.data as { sequence_number: number }).sequence_number)).toEqual([1, 2]);
    expect(await store.size("resp_a")).toBe(3);
    expect((await store.get("resp_a"))?.response.status).toBe("cancelled");
    now = 61_000;
    expect(await store.get("resp_a")).toBeNull();
  });

  it("refuses an append from a replica that lost the lease, and lends a lapsed lease to another", async () => {
    let now = 0;
    const store = new MemoryBackgroundStore(10, () => now);
    await store.create(record("resp_b"), 60);
    expect(await store.lease("resp_b", "one", 1000)).toBe(true);
    expect(await store.lease("resp_b", "two", 1000)).toBe(false);
    now = 1500;
    expect(await store.lease("resp_b", "two", 1000)).toBe(true);
    expect(await store.append("resp_b", [frame(0)], 60, "one")).toBe(false);
    expect(await store.append("resp_b", [frame(0)], 60, "two")).toBe(true);
  });
});
