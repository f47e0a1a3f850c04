import { describe, expect, it } from "vitest";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import { Mailbox } from "../../../src/upstream/mailbox.js";
import { UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";

const snapshot = (output: string, status: QuerySnapshot["status"] = "PROCESSING"): QuerySnapshot => ({
  id: "q1",
  status,
  output,
  steps: [],
  sources: [],
  usage: undefined,
});

describe("a watch's mailbox", () => {
  it("keeps only the newest snapshot for a slow consumer", async () => {
    const box = new Mailbox(snapshot(""), 0, new AbortController().signal, UNTRACED_ANSWER);
    box.deliver(snapshot("a"));
    box.deliver(snapshot("ab"));
    box.deliver(snapshot("abc"));
    expect((await box.take())?.output).toBe("abc");
  });

  it("drops a snapshot that shows nothing new, and wakes a waiting consumer for one that does", async () => {
    const box = new Mailbox(snapshot("a"), 0, new AbortController().signal, UNTRACED_ANSWER);
    box.deliver(snapshot("a"));
    const taken = box.take();
    box.deliver(snapshot("ab", "PROCESSED"));
    expect(await taken).toMatchObject({ output: "ab", status: "PROCESSED" });
  });

  it("throws the first failure to the consumer", async () => {
    const box = new Mailbox(snapshot(""), 0, new AbortController().signal, UNTRACED_ANSWER);
    const taken = box.take();
    box.fail(new Error("first"));
    box.fail(new Error("second"));
    await expect(taken).rejects.toThrow("first");
  });

  it("ends with null when its signal aborts, and stops listening to it once stopped", async () => {
    const controller = new AbortController();
    const box = new Mailbox(snapshot(""), 0, controller.signal, UNTRACED_ANSWER);
    const taken = box.take();
    controller.abort();
    expect(await taken).toBeNull();
    const other = new AbortController();
    const stopped = new Mailbox(snapshot(""), 0, other.signal, UNTRACED_ANSWER);
    stopped.stop();
    other.abort();
    stopped.deliver(snapshot("x"));
    expect((await stopped.take())?.output).toBe("x");
  });

  it("paces normally without a realtime channel", () => {
    expect(new Mailbox(snapshot(""), 5, new AbortController().signal, UNTRACED_ANSWER).pace(10)).toBe("normal");
  });
});
