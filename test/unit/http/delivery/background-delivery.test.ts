import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import pino from "pino";
import { inProcessSchemas } from "../../../../src/structured/schema-service.js";
import { describe, expect, it } from "vitest";
import type { AnswerEvent } from "../../../../src/answer/answer-events.js";
import type { AnswerJob, AnswerService } from "../../../../src/answer/answer-service.js";
import type { RunningAnswer } from "../../../../src/answer/running-answer.js";
import type { Identity } from "../../../../src/auth/authenticate.js";
import { BackgroundResponses } from "../../../../src/continuity/background/background-responses.js";
import { type BackgroundRecord, MemoryBackgroundStore } from "../../../../src/continuity/background/background-store.js";

import { MemoryQueryOwnerStore } from "../../../../src/continuity/ownership/query-owner-store.js";
import { QueryOwners } from "../../../../src/continuity/ownership/query-owners.js";
import type { Turn } from "../../../../src/http/responses/response-turns.js";
import { type BackgroundResume, cancelledResponse, isResponseTerminal, responsesResumption } from "../../../../src/http/responses/responses-resumption.js";
import { ResponseStreamEncoder } from "../../../../src/dialects/responses/response-stream-encoder.js";
import { metaOf } from "../../../../src/dialects/responses/response-meta.js";
import { responseRequestSchema } from "../../../../src/dialects/responses/response-request.js";
import type { Admitted } from "../../../../src/http/admission.js";
import { AnswerRunner, type AnswerRunnerOptions } from "../../../../src/http/answer-runner.js";
import { background } from "../../../../src/http/delivery/background-delivery.js";
import { NOT_METERED } from "../../../../src/http/delivery/delivery.js";
import type { HeldReservation } from "../../../../src/limits/rate-limits.js";
import { Lifecycle } from "../../../../src/http/lifecycle.js";
import { RequestContext } from "../../../../src/http/request-context.js";
import { UNTRACED_ANSWER } from "../../../../src/telemetry/answer-trace.js";
import { O200kTokenCounter } from "../../../../src/tokens/token-counter.js";
import { systemClock } from "../../../../src/util/clock.js";
import { randomIds } from "../../../../src/util/ids.js";
import { waitFor } from "../../../helpers/wait-for.js";

// Background answers (docs/responses-api.md#background-mode) run through the runner's one stream
// loop into an event log: run, cancelled from any replica, and taken over after their replica is gone.

const identity = { principal: "hash", upstreamCredential: "sk", upstreamKey: "key", account: { id: "team-search", label: "team-search" } } as unknown as Identity;
const seconds = () => 1_700_000_000;
const ID = "resp_bg";

/** A response that records its body, and closes when told to. */
class MemoryResponse extends EventEmitter {
  statusCode = 200;
  destroyed = false;
  writableFinished = false;
  body = "";
  setHeader() {}
  end(text = "") {
    this.body += text;
    this.writableFinished = true;
  }
}


/** An answer whose events are `events`, then (with `hang`) nothing until its controller aborts. */
function answerOf(job: Pick<AnswerJob, "controller">, queryIds: string[], events: AnswerEvent[], hang = false): RunningAnswer {
  return {
    queryIds,
    trace: UNTRACED_ANSWER,
    async *events() {
      yield* events;
      if (hang && !job.controller.signal.aborted) await new Promise((resolve) => job.controller.signal.addEventListener("abort", resolve));
    },
    usage: async () => ({ promptTokens: 4, completionTokens: 3, reasoningTokens: 0 }),
  };
}

/** A fake answer service: `start` gives `started`, `follow` gives `followed`; what it was asked is kept. */
function fakeAnswers(started: AnswerEvent[], options: { hang?: boolean; followed?: AnswerEvent[] } = {}) {
  const asked = { starts: [] as AnswerJob[], follows: [] as Parameters<AnswerService["follow"]>[0][] };
  const service = {
    start: async (job: AnswerJob) => {
      asked.starts.push(job);
      return answerOf(job, job.plan.queries.map((query) => query.queryId), started, options.hang);
    },
    follow: (job: Parameters<AnswerService["follow"]>[0]) => {
      asked.follows.push(job);
      return answerOf(job, [job.queryId], options.followed ?? []);
    },
  } as unknown as AnswerService;
  return { service, asked };
}

/** One replica: its background responses over the shared store, and its runner. */
function replica(name: string, store: MemoryBackgroundStore, answers: AnswerService, leaseMs = 60_000, rateLimits?: AnswerRunnerOptions["rateLimits"]) {
  const logger = pino({ level: "silent" });
  const responses = new BackgroundResponses({ store, clock: systemClock, logger, ttlSeconds: 3600, replica: name, leaseMs, followPollMs: 10 });
  const runner = new AnswerRunner({
    answers,
    tokens: new O200kTokenCounter(),
    background: responses,
    lifecycle: new Lifecycle(),
    logger,
    modeField: "mode",
    ids: { ...randomIds, query: () => "q-1" },
    owners: new QueryOwners(new MemoryQueryOwnerStore(10), { ttlSeconds: 60, logger, clock: systemClock }),
    sharedKeyQueryFields: new Set<string>(),
    schemas: inProcessSchemas({ maxBytes: 65_536, maxDepth: 24 }),
    answerTokens: { ask: 500, reason: 1500, build: 3000 },
    rateLimits,
  });
  return { responses, runner };
}

/** An admission whose releases are counted (holding `reservation` in its key's quotas, when given). */
function admission(reservation?: HeldReservation) {
  let released = 0;
  const admitted: Admitted = { meter: NOT_METERED, headers: {}, reservation, release: () => (released += 1), handOver: () => () => (released += 1) };
  return { admitted, released: () => released };
}

const meta = { ...metaOf(ID, responseRequestSchema({ maxMessages: 10 }).parse({ model: "reason", input: "How much leave?" }), 1_700_000_000, null), background: true };
const turn: Turn = { id: ID, principal: "hash", workspace: "acme", queryId: "q-1", meta, input: [], conversation: null };
const resume: BackgroundResume = { mode: "reason", prompt: "How much leave?", turn };
const text = (value: string): AnswerEvent => ({ type: "text", choice: 0, text: value });
const END: AnswerEvent[] = [{ type: "cited", choice: 0, citations: [], sources: [] }, { type: "finished", choice: 0, queryId: "q-1", usage: undefined }];
const types = async (store: MemoryBackgroundStore) => (await store.events(ID, -1)).map((frame) => frame.event);
const numbers = async (store: MemoryBackgroundStore) => (await store.events(ID, -1)).map((frame) => (frame.data as { sequence_number: number }).sequence_number);

/** Starts a background answer on `one` the way the Responses route does; what the client got at once. */
async function startOn(one: ReturnType<typeof replica>, admitted: Admitted, remembered: string[] = []) {
  const response = new MemoryResponse();
  const context = new RequestContext("r", undefined, { audited: false });
  const input = { prompt: "How much leave?", mode: "reason" as const, choices: 1 };
  const planned = one.runner.plan({ context, identity, workspace: "acme", meter: NOT_METERED, input, spanStart: { operation: "chat", model: "reason", stream: false } as const });
  const encoder = new ResponseStreamEncoder(meta, seconds);
  const record = { id: ID, principal: "hash", workspace: "acme", queryId: planned.queryId, resume };
  const job = { responses: one.responses, record, admission: admitted, follow: undefined, isTerminal: isResponseTerminal };
  await one.runner.run(planned, background(encoder, job, { response: response as unknown as ServerResponse, context }), {
    remember: async (sent) => void remembered.push(sent[0]?.content ?? ""),
  });
  return JSON.parse(response.body) as { id: string; status: string };
}

describe("background answers", () => {
  it("run into their log: the response in progress at once, every event's frames numbered, the turn remembered, then the completed object", async () => {
    const store = new MemoryBackgroundStore(10);
    const one = replica("one", store, fakeAnswers([text("Twenty"), text("-five days."), ...END]).service);
    const { admitted, released } = admission();
    const remembered: string[] = [];
    expect(await startOn(one, admitted, remembered)).toMatchObject({ id: ID, status: "in_progress", background: true });
    await waitFor(() => store.ended(ID), "the answer to end");
    expect((await types(store)).slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect((await types(store)).at(-1)).toBe("response.completed");
    expect(await numbers(store)).toEqual((await numbers(store)).map((_, index) => index));
    expect((await store.get(ID))?.response).toMatchObject({ status: "completed", usage: { input_tokens: 4, output_tokens: 3 } });
    expect(remembered).toEqual(["Twenty-five days."]);
    await waitFor(() => released() === 1, "the admission to be given back");
    expect(one.responses.inFlight).toBe(0);
  });

  it("are cancelled from any replica: the one that runs it stops at its next look, the log ends with response.incomplete, a second cancel finds it ended", async () => {
    const store = new MemoryBackgroundStore(10);
    // A short lease: the replica that runs the answer looks at its log every 100 ms.
    const one = replica("one", store, fakeAnswers([text("Twenty")], { hang: true }).service, 300);
    const other = replica("other", store, fakeAnswers([]).service);
    const { admitted, released } = admission();
    await startOn(one, admitted);
    await waitFor(async () => (await types(store)).includes("response.output_text.delta"), "the first text in the log");
    const record = (await store.get(ID)) as BackgroundRecord;
    expect(await other.responses.cancel(record, cancelledResponse(record))).toMatchObject({ cancelled: true, response: { status: "cancelled" } });
    await waitFor(() => released() === 1, "the replica that runs it to stop and give its admission back");
    expect(one.responses.inFlight).toBe(0);
    expect(await one.responses.cancel(record, cancelledResponse(record))).toMatchObject({ cancelled: false, response: { status: "cancelled" } });
    expect((await types(store)).at(-1)).toBe("response.incomplete");
    expect(await numbers(store)).toEqual((await numbers(store)).map((_, index) => index));
  });

  describe("taken over (runner.resume)", () => {
    /** A background answer begun on replica one, which then went away: its log stops after its first text. */
    async function orphan(now: { ms: number }, reservation?: HeldReservation) {
      const store = new MemoryBackgroundStore(10, () => now.ms);
      const one = replica("one", store, fakeAnswers([text("Twenty")], { hang: true }).service);
      const first = admission(reservation);
      await startOn(one, first.admitted);
      await waitFor(async () => (await types(store)).includes("response.output_text.delta"), "the first text in the log");
      one.responses.close();
      await waitFor(() => first.released() === 1, "replica one to stop running it");
      return { store, record: (await store.get(ID)) as BackgroundRecord };
    }

    it("follows the query from where the log stops once the lease ran out, and completes the same log", async () => {
      const now = { ms: Date.now() };
      const { store, record } = await orphan(now);
      const { service, asked } = fakeAnswers([], { followed: [text("-five days."), ...END] });
      const two = replica("two", store, service);
      const stored: Turn[] = [];
      const resumption = responsesResumption({ store: async (stored_turn) => void stored.push(stored_turn) }, seconds);
      const held = admission();
      expect(await two.runner.resume(record, { identity, admission: held.admitted }, resumption)).toBe(false);
      expect(held.released()).toBe(1); // its lease has not run out: nothing taken, nothing held
      now.ms += 61_000;
      const taken = admission();
      expect(await two.runner.resume(record, { identity, admission: taken.admitted }, resumption)).toBe(true);
      await waitFor(() => store.ended(ID), "the answer to end");
      expect(asked.follows).toMatchObject([{ queryId: "q-1", prompt: "How much leave?", mode: "reason", sent: { text: "Twenty", reasoning: "" } }]);
      expect(asked.follows[0]?.caller).toEqual({ credential: "sk", workspace: "acme", credentialKey: "key" });
      const frames = await store.events(ID, -1);
      const deltas = frames.filter((frame) => frame.event === "response.output_text.delta").map((frame) => (frame.data as { delta: string }).delta);
      expect(deltas.join("")).toBe("Twenty-five days.");
      expect(await numbers(store)).toEqual(frames.map((_, index) => index));
      expect((await types(store)).at(-1)).toBe("response.completed");
      expect(stored).toEqual([turn]);
      await waitFor(() => taken.released() === 1, "the admission to be given back");
    });

    it("settles the reservation its record keeps, in its owner's quotas, to the answer's usage, once", async () => {
      const now = { ms: Date.now() };
      const reservation = { id: "r-1", tokens: 1510, at: now.ms };
      const { store, record } = await orphan(now, reservation);
      expect(record.reservation).toEqual(reservation);
      now.ms += 61_000;
      const settled: unknown[][] = [];
      const two = replica("two", store, fakeAnswers([], { followed: [text("-five days."), ...END] }).service, 60_000, {
        settleHeld: (...args) => void settled.push(args),
      });
      const resumption = responsesResumption({ store: async () => undefined }, seconds);
      const taken = admission();
      expect(await two.runner.resume(record, { identity, admission: taken.admitted }, resumption)).toBe(true);
      await waitFor(() => taken.released() === 1, "the answer to end and give its admission back");
      expect(settled).toEqual([["hash", "acme", reservation, 7]]);
    });

    it.each([
      ["a JSON format", { textFormat: { type: "json_object" } }],
      ["a forced function", { call: { name: "record_note" } }],
    ])("is refused when it is a structured answer (%s), which only the replica that asked validates: it ends failed, and nothing is followed", async (_name, structured) => {
      const now = { ms: Date.now() };
      const { store, record } = await orphan(now);
      now.ms += 61_000;
      const { service, asked } = fakeAnswers([]);
      const two = replica("two", store, service);
      const resumption = responsesResumption({ store: async () => undefined }, seconds);
      const held = admission();
      const structuredRecord = { ...record, resume: { ...resume, turn: { ...turn, meta: { ...meta, ...structured } } } };
      expect(await two.runner.resume(structuredRecord, { identity, admission: held.admitted }, resumption)).toBe(false);
      expect(held.released()).toBe(1);
      expect(asked.follows).toEqual([]);
      expect((await store.get(ID))?.response).toMatchObject({ status: "failed", error: { message: expect.stringContaining("a structured answer is validated only by the replica") } });
      expect((await types(store)).at(-1)).toBe("response.failed");
    });

    it("is refused when the state its record keeps does not parse: it ends failed, and nothing is followed", async () => {
      const now = { ms: Date.now() };
      const { store, record } = await orphan(now);
      now.ms += 61_000;
      const { service, asked } = fakeAnswers([]);
      const two = replica("two", store, service);
      const held = admission();
      const corrupted = { ...record, resume: { ...resume, prompt: 42 } };
      const resumption = responsesResumption({ store: async () => undefined }, seconds);
      expect(await two.runner.resume(corrupted, { identity, admission: held.admitted }, resumption)).toBe(false);
      expect(asked.follows).toEqual([]);
      expect(held.released()).toBe(1);
      expect((await store.get(ID))?.response).toMatchObject({ status: "failed", error: { message: expect.stringContaining("its stored state does not parse") } });
      expect((await types(store)).at(-1)).toBe("response.failed");
      expect(await numbers(store)).toEqual((await numbers(store)).map((_, index) => index));
    });
  });
});
