import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSse } from "../../helpers/read-sse.js";
import { chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// Bounded load on loopback only: counts and times are fixed, and the tests stop by themselves.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack(
    { POLL_INTERVAL_MIN_MS: "20", POLL_INTERVAL_MAX_MS: "100", UPSTREAM_KEEPALIVE_MS: "300" },
    { stepDelayMs: 20 },
  );
});
afterAll(() => stack.close());

const prompts = ["leave policy", "password rules", "remote work", "incident reporting", "travel expenses"];

async function streamOnce(dispatcher: Agent, index: number, signal?: AbortSignal): Promise<{ done: boolean; error: unknown }> {
  const { fetch } = await import("undici");
  const response = await fetch(`${stack.url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(),
    body: JSON.stringify(chatBody(prompts[index % prompts.length] as string, { stream: true })),
    dispatcher,
    signal,
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const events = parseSse(bytes).map((event) => event.data);
  const error = events.map((data) => (data === "[DONE]" ? null : JSON.parse(data).error)).find(Boolean);
  return { done: response.status === 200 && events.at(-1) === "[DONE]", error };
}

function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

async function settle(): Promise<void> {
  // Longer than the upstream pool's idle time (300 ms here), so idle pooled connections are gone.
  for (let round = 0; round < 8; round += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    global.gc?.();
  }
}

describe("load", () => {
  it("completes 1,000 concurrent streams without error", async () => {
    const dispatcher = new Agent({ connections: 1000, keepAliveTimeout: 1000 });
    try {
      const lists = stack.workspace.control.calls.list;
      const started = performance.now();
      // A request that fails says why (its cause), in the assertion below.
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, index) =>
          streamOnce(dispatcher, index).catch((error: Error) => ({ done: false, error: String(error.cause ?? error) })),
        ),
      );
      const seconds = (performance.now() - started) / 1000;
      expect(results.filter((result) => !result.done || result.error)).toEqual([]);
      // Shared polling: list calls grow with time, not with the 1,000 waiting streams.
      const listCalls = stack.workspace.control.calls.list - lists;
      expect(listCalls).toBeLessThan((seconds * 1000) / 20 * 10 + 20);
      console.log(`1000 streams in ${seconds.toFixed(2)} s with ${listCalls} list calls`);
    } finally {
      await dispatcher.close();
    }
  }, 60_000);

  it("returns to its baseline of sockets, timers and heap after 1,000 requests with 30% aborted", async () => {
    await settle();
    const baseline = { resources: activeResources(), heap: process.memoryUsage().heapUsed };
    const dispatcher = new Agent({ connections: 250, keepAliveTimeout: 500 });
    let aborted = 0;
    for (let batch = 0; batch < 4; batch += 1) {
      await Promise.all(
        Array.from({ length: 250 }, async (_, offset) => {
          const index = batch * 250 + offset;
          const controller = new AbortController();
          if (index % 10 < 3) {
            aborted += 1;
            setTimeout(() => controller.abort(), 10 + (index % 7) * 15);
          }
          if (index % 2 === 0) return streamOnce(dispatcher, index, controller.signal).catch(() => null);
          const { fetch } = await import("undici");
          return fetch(`${stack.url}/v1/chat/completions`, {
            method: "POST",
            headers: headers(),
            body: JSON.stringify(chatBody(prompts[index % prompts.length] as string)),
            dispatcher,
            signal: controller.signal,
          })
            .then((response) => response.arrayBuffer())
            .catch(() => null);
        }),
      );
    }
    expect(aborted).toBe(300);
    await dispatcher.close();
    await settle();
    // On a busy machine the last sockets and pollers may take longer to go: waited for, then checked.
    const connectionCount = () => new Promise<number>((resolve) => stack.server.getConnections((_error, count) => resolve(count)));
    await waitFor(
      async () =>
        stack.adapter.watcher.activePollers === 0 &&
        stack.adapter.limit.inFlight === 0 &&
        stack.adapter.lifecycle.activeRequests === 0 &&
        (await connectionCount()) === 0 &&
        (activeResources().Timeout ?? 0) <= (baseline.resources.Timeout ?? 0) + 2 &&
        (activeResources().TCPSocketWrap ?? 0) <= (baseline.resources.TCPSocketWrap ?? 0) + 2,
      "the baseline of pollers, requests, connections, timers and sockets",
    ).catch(() => undefined);
    global.gc?.();

    expect(stack.adapter.watcher.activePollers).toBe(0);
    expect(stack.adapter.limit.inFlight).toBe(0);
    expect(stack.adapter.lifecycle.activeRequests).toBe(0);
    expect(await connectionCount()).toBe(0);
    const after = activeResources();
    expect(after.Timeout ?? 0).toBeLessThanOrEqual((baseline.resources.Timeout ?? 0) + 2);
    expect(after.TCPSocketWrap ?? 0).toBeLessThanOrEqual((baseline.resources.TCPSocketWrap ?? 0) + 2);
    const growth = (process.memoryUsage().heapUsed - baseline.heap) / 1024 / 1024;
    console.log(`heap growth after 1000 requests: ${growth.toFixed(1)} MB; resources before ${JSON.stringify(baseline.resources)} after ${JSON.stringify(after)}`);
    expect(growth).toBeLessThan(20);
  }, 60_000);
});
