import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

let stack: Stack;
beforeAll(async () => {
  // Polling alone (no realtime channel), with queries (about 3.5 s each) that outlast the time it takes
  // to send all 150 even on a loaded machine, so more than one page of them waits at once.
  stack = await startStack({ POLL_INTERVAL_MIN_MS: "25", POLL_INTERVAL_MAX_MS: "100", REALTIME: "off" }, { stepDelayMs: 400 });
});
afterAll(() => stack.close());

describe("shared polling", () => {
  it("answers 150 concurrent queries in one workspace with a bounded number of list calls", async () => {
    const before = { ...stack.workspace.control.calls };
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: 150 }, (_, index) =>
        fetch(`${stack.url}/v1/chat/completions`, {
          method: "POST",
          headers: headers(),
          body: JSON.stringify(chatBody(index % 2 ? "leave policy" : "password rules")),
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { choices: { message: { content: string } }[] },
        })),
      ),
    );
    const elapsed = performance.now() - started;
    expect(responses.map((response) => response.status)).toEqual(Array(150).fill(200));
    for (const response of responses)
      expect(response.body.choices[0]?.message.content).toMatch(/25 days|14 characters/);

    const lists = stack.workspace.control.calls.list - before.list;
    const followUps = stack.workspace.control.calls.listWithCursor - before.listWithCursor;
    // 150 queries do not fit one page of 100: some answers were found by following next_cursor.
    expect(followUps).toBeGreaterThan(0);
    // One poll per interval at most (two pages each), however many requests wait; per-request
    // polling would need at least one list call per request and poll (hundreds).
    const polls = Math.ceil(elapsed / 25) + 1;
    expect(lists).toBeLessThanOrEqual(polls * 2);
    expect(lists).toBeLessThan(150);
    expect(stack.adapter.watcher.activePollers).toBe(0);
  });
});
