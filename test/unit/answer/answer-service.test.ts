import { describe, expect, it } from "vitest";
import type { AnswerEvent } from "../../../src/answer/answer-events.js";
import { type AnswerJob, AnswerService } from "../../../src/answer/answer-service.js";
import { countUsage } from "../../../src/answer/count-usage.js";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import { UpstreamError } from "../../../src/errors/adapter-error.js";
import { planQueries } from "../../../src/plan/plan-queries.js";
import { UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";
import { EARLY_COUNT_CHARS, O200kTokenCounter, type TokenCounter } from "../../../src/tokens/token-counter.js";
import type { QueryWatcher, WatchRequest } from "../../../src/upstream/query-watcher.js";
import type { WorkspaceClient } from "../../../src/upstream/workspace-client.js";

// The answer core (docs/architecture/runner.md#the-answer-events): `start` creates a plan's queries and
// follows them; `follow` follows a query that exists (a background answer taken over) from where
// another replica's answer stopped, creating nothing.

const caller = { credential: "sk", workspace: "acme", credentialKey: "key" };
const tokens = new O200kTokenCounter();

/** A snapshot of query `id`. */
const snapshot = (id: string, status: QuerySnapshot["status"], output: string, steps: unknown[] = []): QuerySnapshot =>
  ({ id, status, output, steps, sources: [], usage: undefined });

/** A workspace that creates what it is asked to (or fails), and a watcher that replays each query's snapshots. */
function fakeUpstream(script: Record<string, QuerySnapshot[]>, options: { createFails?: boolean; tokens?: TokenCounter } = {}) {
  const creates: Record<string, unknown>[] = [];
  const watches: WatchRequest[] = [];
  const client = {
    createQuery: async (_caller: unknown, body: Record<string, unknown> & { id: string }) => {
      creates.push(body);
      if (options.createFails) throw new UpstreamError("the workspace did not answer");
      return { id: body.id, status: "PENDING", output: "", steps: [] };
    },
  } as unknown as WorkspaceClient;
  const watcher = {
    async *watch(request: WatchRequest) {
      watches.push(request);
      yield* script[request.initial.id] ?? [];
    },
  } as unknown as QueryWatcher;
  const service = new AnswerService({ client, watcher, queryTimeoutMs: { ask: 1000, reason: 1000, build: 1000 }, maxListPages: 1, tokens: options.tokens ?? tokens });
  return { service, creates, watches };
}

/** A job for `choices` choices of `prompt`, with query ids q-1, q-2, …. */
function jobOf(prompt: string, choices = 1): AnswerJob {
  let ids = 0;
  const plan = planQueries({ prompt, mode: "ask", choices }, { modeField: "mode", newQueryId: () => `q-${(ids += 1)}` });
  return { plan, caller, controller: new AbortController(), usageNeeded: true, trace: UNTRACED_ANSWER };
}

async function collect(events: AsyncGenerator<AnswerEvent>): Promise<AnswerEvent[]> {
  const all: AnswerEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

const shapes = (events: AnswerEvent[]) => events.map((event) => (event.type === "text" ? `text ${event.text}` : event.type === "reasoning" ? `reasoning ${event.text.trim()}` : event.type));

describe("AnswerService", () => {
  it("starts by creating each choice's query from the plan, then follows every snapshot into events", async () => {
    const script = { "q-1": [snapshot("q-1", "PROCESSING", "Twenty", [{ text: "Reading the handbook" }]), snapshot("q-1", "PROCESSED", "Twenty-five days.")] };
    const { service, creates, watches } = fakeUpstream(script);
    const answer = await service.start(jobOf("How much leave?"));
    expect(creates).toEqual([{ content: "How much leave?", id: "q-1", mode: "ask" }]);
    expect(answer.queryIds).toEqual(["q-1"]);
    const events = await collect(answer.events("every-snapshot"));
    expect(shapes(events)).toEqual(["reasoning Reading the handbook", "text Twenty", "text -five days.", "cited", "finished"]);
    expect(watches.map((watch) => [watch.initial.id, watch.initial.status])).toEqual([["q-1", "PENDING"]]);
    const usage = await answer.usage([{ content: "Twenty-five days.", reasoning: "" }]);
    expect(usage).toEqual(await countUsage([{ prompt: "How much leave?", content: "Twenty-five days.", reasoning: "" }], tokens));
  });

  it("counts a short prompt in the same count as the answer, and a long one while the upstream answers", async () => {
    const calls: string[][] = [];
    const spy: TokenCounter = {
      count: async (texts) => {
        calls.push([...texts]);
        return tokens.count(texts);
      },
      close: async () => {},
    };
    const script = { "q-1": [snapshot("q-1", "PROCESSED", "Twenty-five days.")] };
    const sent = [{ content: "Twenty-five days.", reasoning: "" }];
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

    const short = await fakeUpstream(script, { tokens: spy }).service.start(jobOf("How much leave?"));
    await nextTurn();
    expect(calls).toEqual([]);
    expect(await short.usage(sent)).toEqual(await countUsage([{ prompt: "How much leave?", ...sent[0]! }], tokens));
    expect(calls).toEqual([["How much leave?", "Twenty-five days.", ""]]);

    calls.length = 0;
    const prompt = "How much leave do I get? ".repeat(Math.ceil(EARLY_COUNT_CHARS / 20));
    const long = await fakeUpstream(script, { tokens: spy }).service.start(jobOf(prompt));
    await nextTurn();
    expect(calls).toEqual([[prompt]]);
    expect(await long.usage(sent)).toEqual(await countUsage([{ prompt, ...sent[0]! }], tokens));
    expect(calls).toEqual([[prompt], ["", "Twenty-five days.", ""]]);
  });

  it("gives the text whole at the end when following only the final snapshot, and the steps as they come for progress", async () => {
    const script = {
      "q-1": [
        snapshot("q-1", "PROCESSING", "Twenty", [{ text: "Reading" }]),
        snapshot("q-1", "PROCESSED", "Twenty-five days.", [{ text: "Reading" }, { text: "Counting" }]),
      ],
    };
    const final = await collect((await fakeUpstream(script).service.start(jobOf("How much leave?"))).events("final"));
    expect(shapes(final).map((shape) => shape.replace(/\s+/g, " "))).toEqual(["reasoning Reading Counting", "text Twenty-five days.", "cited", "finished"]);
    const steps = await collect((await fakeUpstream(script).service.start(jobOf("How much leave?"))).events("steps"));
    expect(shapes(steps)).toEqual(["reasoning Reading", "reasoning Counting", "text Twenty-five days.", "cited", "finished"]);
  });

  it("fails a start whose query cannot be created, aborting the answer's controller", async () => {
    const { service } = fakeUpstream({}, { createFails: true });
    const job = jobOf("How much leave?");
    await expect(service.start(job)).rejects.toBeInstanceOf(UpstreamError);
    expect(job.controller.signal.aborted).toBe(true);
  });

  it("ends with a failed event when a query fails, and stops following the other choices", async () => {
    const script = { "q-1": [snapshot("q-1", "FAILED", "the index is gone")], "q-2": [snapshot("q-2", "PROCESSING", "Twen")] };
    const job = jobOf("How much leave?", 2);
    const answer = await fakeUpstream(script).service.start(job);
    const events = await collect(answer.events("every-snapshot"));
    expect(events.at(-1)).toMatchObject({ type: "failed", error: { message: expect.stringContaining("the index is gone") } });
    expect(job.controller.signal.aborted).toBe(true);
  });

  it("follows a query that exists without creating it, going on after what the other replica sent", async () => {
    const script = { "q-9": [snapshot("q-9", "PROCESSING", "Twenty", [{ text: "Reading" }]), snapshot("q-9", "PROCESSED", "Twenty-five days.", [{ text: "Reading" }])] };
    const { service, creates, watches } = fakeUpstream(script);
    const { plan: _plan, ...job } = jobOf("How much leave?");
    const answer = service.follow({ ...job, queryId: "q-9", prompt: "How much leave?", mode: "reason", sent: { text: "Twenty", reasoning: "Reading\n" } });
    expect(answer.queryIds).toEqual(["q-9"]);
    const events = await collect(answer.events("every-snapshot"));
    expect(creates).toEqual([]);
    expect(watches.map((watch) => [watch.initial.id, watch.initial.status, watch.label])).toEqual([["q-9", "PROCESSING", "reason query q-9"]]);
    // Neither the text nor the step the other replica sent comes again.
    expect(shapes(events)).toEqual(["text -five days.", "cited", "finished"]);
  });
});
