import fc from "fast-check";
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HotCounter, HotHistogram } from "../../../src/metrics/hot-series.js";

const BUCKETS = [0.005, 0.01, 0.05, 0.5, 1, 10];
const labelNames = ["route", "mode", "status"] as const;
type Labels = Record<(typeof labelNames)[number], string>;

/** The same metrics twice: prom-client's own, and the hot ones, each in a registry of its own. */
function pair() {
  const reference = new Registry();
  const hot = new Registry();
  const options = { name: "requests_total", help: "Requests, by route, mode and status", labelNames };
  const timing = { name: "request_seconds", help: "Latency \\ with \"quotes\"", labelNames, buckets: BUCKETS };
  return {
    reference,
    hot,
    counters: [new Counter({ ...options, registers: [reference] }), new HotCounter({ ...options, registers: [hot] })] as const,
    histograms: [new Histogram({ ...timing, registers: [reference] }), new HotHistogram({ ...timing, registers: [hot] })] as const,
  };
}

const labels = fc.record({
  route: fc.constantFrom("/v1/chat/completions", "/v1/responses", 'odd "route"\n'),
  mode: fc.constantFrom("ask", "reason", ""),
  status: fc.constantFrom("200", "422", "499"),
});
const observation = fc.record({
  labels,
  seconds: fc.oneof(fc.constantFrom(0, 0.005, 0.01, 10, 11), fc.double({ min: 0, max: 20, noNaN: true })),
  increment: fc.integer({ min: 1, max: 5 }),
});

describe("hot metrics", () => {
  it("expose what prom-client's counter and histogram expose for the same requests, scrape after scrape", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(observation, { maxLength: 30 }), { minLength: 1, maxLength: 4 }), async (scrapes) => {
        const { reference, hot, counters, histograms } = pair();
        for (const batch of scrapes) {
          for (const { labels: seen, seconds, increment } of batch) {
            counters[0].inc(seen, increment);
            counters[1].inc(seen as Labels, increment);
            histograms[0].observe(seen, seconds);
            histograms[1].observe(seen as Labels, seconds);
          }
          expect(await hot.metrics()).toBe(await reference.metrics());
          expect(await hot.getMetricsAsJSON()).toEqual(await reference.getMetricsAsJSON());
        }
      }),
      { numRuns: 200 },
    );
  });

  it("forget what they counted when the registry resets its metrics, as prom-client's do", async () => {
    const { reference, hot, counters, histograms } = pair();
    const seen: Labels = { route: "/v1/chat/completions", mode: "ask", status: "200" };
    for (const [counter, histogram] of [[counters[0], histograms[0]], [counters[1], histograms[1]]] as const) {
      counter.inc(seen, 2);
      histogram.observe(seen, 0.02);
    }
    reference.resetMetrics();
    hot.resetMetrics();
    expect(await hot.metrics()).toBe(await reference.metrics());
    counters[0].inc(seen);
    counters[1].inc(seen);
    expect(await hot.metrics()).toBe(await reference.metrics());
  });

  it("refuses a value that is not a number, as prom-client does", () => {
    const { histograms } = pair();
    expect(() => histograms[1].observe({ route: "r", mode: "m", status: "200" }, Number.NaN)).toThrow(TypeError);
  });

  it("keep a copy of the labels they were given", async () => {
    const { hot, counters } = pair();
    const seen: Labels = { route: "/v1/responses", mode: "ask", status: "200" };
    counters[1].inc(seen);
    seen.status = "500";
    expect(await hot.metrics()).toContain('requests_total{route="/v1/responses",mode="ask",status="200"} 1');
  });
});
