import { afterEach, describe, expect, it, vi } from "vitest";
import { QueryStore } from "../../../../src/embedded-workspace/query-store.js";
import { AnswerPublisher } from "../../../../src/embedded-workspace/realtime/answer-publisher.js";
import type { CentrifugoEndpoint } from "../../../../src/embedded-workspace/realtime/centrifugo-endpoint.js";

afterEach(() => {
  vi.useRealTimers();
});

const output =
  "Employees receive 25 days of paid annual leave per calendar year [1]. Unused leave of up to 5 days carries over " +
  "into the first quarter of the next year [1]. Remote work is allowed up to three days per week [2].\n\nSources:\n[1] handbook.md\n[2] remote.md\n";

/** A publisher at a 120 ms pace (fake timers), and a two-step query it may publish; what it publishes is collected. */
function publishing() {
  vi.useFakeTimers();
  const stepDelayMs = 120;
  const store = new QueryStore(stepDelayMs);
  const published: Record<string, unknown>[] = [];
  const endpoint = { publish: (_channel: string, data: Record<string, unknown>) => published.push(data) } as unknown as CentrifugoEndpoint;
  const publisher = new AnswerPublisher(endpoint, (query, at) => store.view(query, at), () => Date.now(), stepDelayMs);
  const query = store.startTurn("acme", "q1", {
    content: "leave?",
    mode: "ask",
    startedAt: Date.now(),
    script: { steps: [{ text: "Looking." }, { tool: "search" }], output, sources: [] },
    fault: null,
  });
  return { stepDelayMs, store, published, publisher, query };
}

describe("AnswerPublisher", () => {
  it("publishes every word before the list shows it, each once, then the terminal status, and stops its timer", () => {
    const { store, published, publisher, query } = publishing();
    publisher.track(query, "queries:q1");
    const text = () => published.map((data) => (typeof data.delta === "string" ? data.delta : "")).join("");
    let listShowed = 0;
    while (publisher.active > 0) {
      vi.advanceTimersByTime(1);
      const list = store.view(query, Date.now());
      // Checked after each millisecond: the channel has published at least what the list shows.
      expect(text().startsWith(list.output)).toBe(true);
      listShowed = Math.max(listShowed, list.output.length);
      if (list.status !== "PROCESSED") expect(published.some((data) => data.status === "PROCESSED")).toBe(false);
    }
    expect(text()).toBe(output);
    expect(listShowed).toBe(output.length);
    const deltas = published.filter((data) => data.delta !== undefined);
    expect(deltas.length).toBe(output.match(/\s*\S+|\s+$/g)?.length);
    expect(published.filter((data) => data.step !== undefined).map((data) => data.step)).toEqual([{ text: "Looking." }, { tool: "search" }]);
    expect(published.at(-1)).toEqual({ status: "PROCESSED" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("publishes only what comes after the create answer's view, when the create answer already showed a step", () => {
    const { stepDelayMs, store, published, publisher, query } = publishing();
    // A slow create handler: its answer is computed once the first step is due.
    vi.advanceTimersByTime(stepDelayMs + 1);
    const shown = store.view(query, Date.now());
    expect(shown.steps).toEqual([{ text: "Looking." }]);
    publisher.track(query, "queries:q1", shown);
    while (publisher.active > 0) vi.advanceTimersByTime(1);
    const steps = published.filter((data) => data.step !== undefined).map((data) => data.step);
    expect([...shown.steps, ...steps]).toEqual([{ text: "Looking." }, { tool: "search" }]);
    const text = published.map((data) => (typeof data.delta === "string" ? data.delta : "")).join("");
    expect(shown.output + text).toBe(output);
  });

  it("publishes nothing when answers come at once", () => {
    vi.useFakeTimers();
    const store = new QueryStore(0);
    const published: unknown[] = [];
    const endpoint = { publish: (_channel: string, data: unknown) => published.push(data) } as unknown as CentrifugoEndpoint;
    const publisher = new AnswerPublisher(endpoint, (query, at) => store.view(query, at), () => Date.now(), 0);
    const query = store.startTurn("acme", "q1", { content: "x", mode: "ask", startedAt: Date.now(), script: { steps: [], output, sources: [] }, fault: null });
    publisher.track(query, "queries:q1");
    expect(publisher.active).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(published).toEqual([]);
  });
});
