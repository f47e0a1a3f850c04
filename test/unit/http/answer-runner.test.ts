import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import pino from "pino";
import { inProcessSchemas } from "../../../src/structured/schema-service.js";
import { describe, expect, it } from "vitest";
import type { BodyEncoder, StreamEncoder } from "../../../src/answer/answer-encoder.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "../../../src/answer/answer-events.js";
import { countUsage } from "../../../src/answer/count-usage.js";
import type { AnswerJob, AnswerService } from "../../../src/answer/answer-service.js";
import type { RunningAnswer } from "../../../src/answer/running-answer.js";
import type { Identity } from "../../../src/auth/authenticate.js";
import { ClientClosedError, NotFoundError, QueryFailedError, RequestValidationError } from "../../../src/errors/adapter-error.js";
import type { BackgroundResponses } from "../../../src/continuity/background/background-responses.js";
import { MemoryQueryOwnerStore } from "../../../src/continuity/ownership/query-owner-store.js";
import { QueryOwners } from "../../../src/continuity/ownership/query-owners.js";
import { AnswerRunner } from "../../../src/http/answer-runner.js";
import { type CollectEncoder, collect } from "../../../src/http/delivery/collect-delivery.js";
import type { UsageMeter } from "../../../src/http/delivery/delivery.js";
import { json } from "../../../src/http/delivery/json-delivery.js";
import { sse } from "../../../src/http/delivery/stream-delivery.js";
import { Lifecycle } from "../../../src/http/lifecycle.js";
import { RequestContext } from "../../../src/http/request-context.js";
import type { AnswerStart } from "../../../src/telemetry/answer-facts.js";
import { KeepAliveSweeps } from "../../../src/http/sse-writer.js";
import type { UsageLedger } from "../../../src/usage/usage-ledger.js";
import { waitFor } from "../../helpers/wait-for.js";
import { type AnswerTrace, UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";
import { O200kTokenCounter } from "../../../src/tokens/token-counter.js";
import { systemClock } from "../../../src/util/clock.js";
import { randomIds } from "../../../src/util/ids.js";

const USAGE: TokenUsage = { promptTokens: 7, completionTokens: 5, reasoningTokens: 0 } as TokenUsage;
const identity = { principal: "hash", upstreamCredential: "sk", upstreamKey: "key", account: { id: "team-search", label: "team-search" } } as unknown as Identity;

/** An in-memory response: what was written, in order, with the headers. */
class MemoryResponse extends EventEmitter {
  statusCode = 200;
  destroyed = false;
  writableFinished = false;
  headers: Record<string, unknown> = {};
  log: string[] = [];
  setHeader(name: string, value: unknown) {
    this.headers[name] = value;
  }
  flushHeaders() {}
  cork() {}
  uncork() {}
  write(text: string) {
    this.log.push(`write ${text}`);
    return true;
  }
  end(text?: string) {
    this.log.push(`end${text ? ` ${text}` : ""}`);
    this.writableFinished = true;
  }
}

/** A fake answer service: events from a list, usage counted and recorded. */
function fakeAnswers(events: AnswerEvent[], trace?: AnswerTrace) {
  const calls = { starts: [] as AnswerJob[], usage: 0 };
  const running = (job?: AnswerJob): RunningAnswer => ({
    queryIds: job ? job.plan.queries.map((query) => query.queryId) : ["local"],
    trace: job?.trace ?? UNTRACED_ANSWER,
    async *events() {
      yield* events;
    },
    usage: async () => {
      calls.usage += 1;
      return USAGE;
    },
  });
  const service = {
    start: async (job: AnswerJob) => {
      calls.starts.push(job);
      return running(job);
    },
  } as unknown as AnswerService;
  return { service, calls, running, trace };
}

/** A request's context whose answer span is `trace` (untraced without one). */
class FakeContext extends RequestContext {
  constructor(private readonly trace?: AnswerTrace) {
    super("r", undefined, { audited: false });
  }

  override traceAnswer(start: AnswerStart): AnswerTrace {
    return this.trace ?? super.traceAnswer(start);
  }
}

/** Where an HTTP delivery writes in these tests: `response`, whose request's context ends when it closes. */
function targetOf(response: MemoryResponse, trace?: AnswerTrace) {
  const context = new FakeContext(trace);
  response.once("close", () => context.close(response.writableFinished));
  return { response: response as unknown as ServerResponse, context };
}

/** A span that records what the runner told it. */
function fakeTrace() {
  const told: { delivered: unknown[][]; respondedAs: string[] } = { delivered: [], respondedAs: [] };
  const trace: AnswerTrace = {
    ...UNTRACED_ANSWER,
    delivered: (...args: unknown[]) => told.delivered.push(args),
    respondedAs: (id: string) => told.respondedAs.push(id),
  };
  return { trace, told };
}

function meter(countsTokens: boolean) {
  const charges: TokenUsage[] = [];
  const usageMeter: UsageMeter = { countsTokens, charge: (usage) => charges.push(usage), asked: () => undefined };
  return { usageMeter, charges };
}

const EVENTS: AnswerEvent[] = [
  { type: "text", choice: 0, text: "Hello" },
  { type: "cited", choice: 0, citations: [], sources: [] },
  { type: "finished", choice: 0, queryId: "q-1", usage: undefined },
];

/** A body encoder that keeps the text and puts usage in the body. */
function bodyEncoder(): BodyEncoder<{ text: string; usage: TokenUsage }> {
  let text = "";
  return {
    add: (event) => {
      if (event.type === "text") text += event.text;
    },
    sent: () => [{ content: text }] as ChoiceSent[],
    body: (usage) => ({ text, usage }),
  };
}

/** A stream encoder: a frame per text event, the usage frame when it reports usage. */
function streamEncoder(needsUsage: boolean): StreamEncoder {
  let text = "";
  return {
    needsUsage,
    open: () => [{ data: "open" }],
    encode: (event) => {
      if (event.type !== "text") return [];
      text += event.text;
      return [{ data: { text: event.text } }];
    },
    sent: () => [{ content: text }] as ChoiceSent[],
    close: (usage) => [...(usage ? [{ data: { usage: usage.promptTokens + usage.completionTokens } }] : []), { data: "[DONE]" }],
    fail: (error) => [{ data: { error: error.message } }, { data: "[DONE]" }],
  };
}

function runnerOf(answers: AnswerService, ledger?: UsageLedger, owners: MemoryQueryOwnerStore = new MemoryQueryOwnerStore(100)) {
  let ids = 0;
  const logger = pino({ level: "silent" });
  return new AnswerRunner({
    owners: new QueryOwners(owners, { ttlSeconds: 60, logger, clock: systemClock }),
    sharedKeyQueryFields: new Set(["follow_up"]),
    answers,
    lifecycle: new Lifecycle(),
    logger: pino({ level: "silent" }),
    modeField: "mode",
    ids: { ...randomIds, query: () => `q-${(ids += 1)}` },
    tokens: new O200kTokenCounter(),
    background: {} as BackgroundResponses,
    ledger,
    schemas: inProcessSchemas({ maxBytes: 65_536, maxDepth: 24 }),
    answerTokens: { ask: 500, reason: 1500, build: 3000 },
  });
}

/** A usage ledger that keeps what it was charged, by who, where and in which mode. */
function fakeLedger() {
  const charged: unknown[][] = [];
  const ledger = { charge: (...args: unknown[]) => void charged.push(args) } as unknown as UsageLedger;
  return { ledger, charged };
}

const sweep = new KeepAliveSweeps().of(60_000);
const input = { prompt: "leave policy", mode: "ask" as const, choices: 1 };
const spanStart = { operation: "chat", model: "ask", stream: false } as const;

describe("AnswerRunner", () => {
  it("plans, starts, writes one JSON body with the usage, remembers before the last bytes, and charges once", async () => {
    const { trace, told } = fakeTrace();
    const { service, calls } = fakeAnswers(EVENTS);
    const { usageMeter, charges } = meter(true);
    const response = new MemoryResponse();
    const runner = runnerOf(service);
    const target = targetOf(response, trace);
    const planned = runner.plan({ context: target.context, identity, workspace: "acme", meter: usageMeter, input, spanStart });
    expect([planned.queryIds, calls.starts]).toEqual([["q-1"], []]);
    const body = await runner.run(planned, json(bodyEncoder(), target), {
      respondedAs: `chatcmpl-${planned.queryId}`,
      remember: async (sent) => {
        response.log.push(`remember ${sent[0]?.content}`);
      },
    });
    expect(body).toEqual({ text: "Hello", usage: USAGE });
    expect(response.log).toEqual(["remember Hello", `end ${JSON.stringify(body)}`]);
    expect(response.headers["service-query-id"]).toBe("q-1");
    expect(calls.starts).toHaveLength(1);
    expect(calls.starts[0]?.usageNeeded).toBe(true);
    expect(calls.starts[0]?.plan.queries[0]?.queryId).toBe("q-1");
    expect(calls.usage).toBe(1);
    expect(charges).toEqual([USAGE]);
    expect(told.respondedAs).toEqual(["chatcmpl-q-1"]);
    expect(told.delivered).toEqual([[[{ content: "Hello" }], USAGE]]);
  });

  it("counts a stream's usage once for both the TPM limit and a sampled span when the client did not ask for it (the doubled charge)", async () => {
    const { trace, told } = fakeTrace();
    const { service, calls } = fakeAnswers(EVENTS);
    const { usageMeter, charges } = meter(true);
    const response = new MemoryResponse();
    const target = targetOf(response, trace);
    const runner = runnerOf(service);
    const order = { context: target.context, identity, workspace: "acme", meter: usageMeter, input, spanStart };
    await runner.run(runner.plan(order), sse(streamEncoder(false), target, sweep));
    expect(calls.starts[0]?.usageNeeded).toBe(true); // the TPM limit needs it
    expect(response.log).toEqual(["write data: open\n\n", 'write data: {"text":"Hello"}\n\n', "write data: [DONE]\n\n", "end"]);
    // The span is handed the count to ask for (a sampled span does): the one the TPM limit started.
    const [[, counted]] = told.delivered as [[unknown, () => Promise<TokenUsage>]];
    await expect(counted()).resolves.toEqual(USAGE);
    expect(calls.usage).toBe(1);
    expect(charges).toEqual([USAGE]);
  });

  it("reports a stream's usage when the encoder asks for it, counted and charged once", async () => {
    const { trace, told } = fakeTrace();
    const { service, calls } = fakeAnswers(EVENTS);
    const { usageMeter, charges } = meter(true);
    const response = new MemoryResponse();
    const target = targetOf(response, trace);
    const runner = runnerOf(service);
    const order = { context: target.context, identity, workspace: "acme", meter: usageMeter, input, spanStart };
    await runner.run(runner.plan(order), sse(streamEncoder(true), target, sweep));
    expect(response.log).toContain('write data: {"usage":12}\n\n');
    expect(told.delivered).toEqual([[[{ content: "Hello" }], USAGE]]);
    expect(calls.usage).toBe(1);
    expect(charges).toEqual([USAGE]);
  });

  it("charges the usage ledger at the one charge point, with the meter: once, under who asked, the workspace and the planned mode", async () => {
    const { service, calls } = fakeAnswers(EVENTS);
    const { usageMeter, charges } = meter(false);
    const { ledger, charged } = fakeLedger();
    const target = targetOf(new MemoryResponse());
    const runner = runnerOf(service, ledger);
    const order = { context: target.context, identity, workspace: "acme", meter: usageMeter, input, spanStart };
    // A stream whose client did not ask for usage, untraced, under no token limit: the ledger alone needs it.
    await runner.run(runner.plan(order), sse(streamEncoder(false), target, sweep));
    await waitFor(() => charged.length === 1, "the ledger's charge");
    expect(calls.starts[0]?.usageNeeded).toBe(true);
    expect(charged).toEqual([[identity.account, "acme", "ask", USAGE]]);
    expect([calls.usage, charges]).toEqual([1, [USAGE]]);
  });

  it("counts nothing for an untraced stream without usage and no TPM limit", async () => {
    const { service, calls } = fakeAnswers(EVENTS);
    const { usageMeter, charges } = meter(false);
    const target = targetOf(new MemoryResponse());
    const runner = runnerOf(service);
    const order = { context: target.context, identity, workspace: "acme", meter: usageMeter, input, spanStart };
    await runner.run(runner.plan(order), sse(streamEncoder(false), target, sweep));
    expect(calls.starts[0]?.usageNeeded).toBe(false);
    expect(calls.usage).toBe(0);
    expect(charges).toEqual([]);
  });

  it("ends a stream whose answer failed with the dialect's failure frames, remembering nothing, charged once for its prompt and at least the expected answer", async () => {
    const failed: AnswerEvent[] = [{ type: "text", choice: 0, text: "He" }, { type: "failed", error: new QueryFailedError("boom") }];
    const { service, calls } = fakeAnswers(failed);
    const { usageMeter, charges } = meter(true);
    const response = new MemoryResponse();
    const target = targetOf(response);
    const runner = runnerOf(service);
    const order = { context: target.context, identity, workspace: "acme", meter: usageMeter, input, spanStart };
    const remembered: ChoiceSent[][] = [];
    await runner.run(runner.plan(order), sse(streamEncoder(true), target, sweep), { remember: async (sent) => void remembered.push(sent) });
    expect(response.log.slice(-3)).toEqual(['write data: {"error":"boom"}\n\n', "write data: [DONE]\n\n", "end"]);
    expect(remembered).toEqual([]);
    await waitFor(() => (charges.length > 0 ? true : undefined), "the failed answer's charge");
    expect(calls.usage).toBe(1);
    expect(charges).toEqual([{ ...USAGE, completionTokens: 500 }]);
  });

  it("throws a failed JSON answer for the edge to map", async () => {
    const { service } = fakeAnswers([{ type: "failed", error: new QueryFailedError("boom") }]);
    const response = new MemoryResponse();
    const target = targetOf(response);
    const runner = runnerOf(service);
    const order = { context: target.context, identity, workspace: "acme", meter: meter(false).usageMeter, input, spanStart };
    await expect(runner.run(runner.plan(order), json(bodyEncoder(), target))).rejects.toThrow("boom");
    expect(response.log).toEqual([]);
  });

  it("delivers a local answer with no plan, no start and no charge, its usage counted like any answer's", async () => {
    const { service, calls } = fakeAnswers(EVENTS);
    const response = new MemoryResponse();
    const job = { prompt: "leave policy", text: "Hello", choices: 1, id: "local-1" };
    const encoder = bodyEncoder();
    const withReasoning = { ...encoder, sent: () => encoder.sent().map((choice) => ({ ...choice, reasoning: "" })) };
    const body = await runnerOf(service).answerLocally(job, json(withReasoning, targetOf(response)));
    const counted = await countUsage([{ prompt: "leave policy", content: "Hello", reasoning: "" }], new O200kTokenCounter());
    expect(body).toEqual({ text: "Hello", usage: counted });
    expect(counted.promptTokens).toBeGreaterThan(0);
    expect(calls.starts).toEqual([]);
    expect(response.headers["service-query-id"]).toBeUndefined();
  });

  describe("under a shared upstream credential (docs/governance.md#whose-query-it-is)", () => {
    /** Plans and runs an order into a JSON body, written nowhere. */
    const answerOf = async (runner: AnswerRunner, order: ReturnType<typeof orderOf>) =>
      runner.run(runner.plan(order), json(bodyEncoder(), { response: new MemoryResponse() as unknown as ServerResponse, context: order.context }));
    const shared = (principal: string) => ({ ...identity, principal, sharedUpstream: true }) as Identity;
    const orderOf = (who: Identity, extra: Record<string, unknown>) => ({
      context: new FakeContext(),
      identity: who,
      workspace: "acme",
      meter: meter(false).usageMeter,
      spanStart,
      ...extra,
      input: { ...input, ...(extra.input as object) },
    });

    it("records the owner of every query it creates, n > 1 included, and of a continued one", async () => {
      const { service, calls } = fakeAnswers(EVENTS);
      const owners = new MemoryQueryOwnerStore(100);
      const runner = runnerOf(service, undefined, owners);
      // The fake answers finish one choice: the delivery of two refuses, after both queries started.
      await answerOf(runner, orderOf(shared("alice"), { input: { choices: 2 } })).catch(() => undefined);
      expect(await owners.get("q-1")).toEqual({ principal: "alice", workspace: "acme" });
      expect(await owners.get("q-2")).toEqual({ principal: "alice", workspace: "acme" });
      await answerOf(runner, orderOf(shared("alice"), { input: { continueQueryId: "q-1" }, namesQuery: true }));
      expect(calls.starts.map((job) => job.plan.queries.map((query) => query.queryId))).toEqual([["q-1", "q-2"], ["q-1"]]);
    });

    it("refuses a query_id another principal started, or none did, with a 404 and nothing asked; another workspace's too", async () => {
      const { service, calls } = fakeAnswers(EVENTS);
      const owners = new MemoryQueryOwnerStore(100);
      await owners.claim("q-alice", { principal: "alice", workspace: "acme" }, 60);
      const runner = runnerOf(service, undefined, owners);
      const named = (who: Identity, queryId: string, workspace = "acme") => orderOf(who, { input: { continueQueryId: queryId }, namesQuery: true, workspace });
      for (const order of [named(shared("mallory"), "q-alice"), named(shared("mallory"), "q-never"), named(shared("alice"), "q-alice", "globex")]) {
        const refused = answerOf(runner, order);
        await expect(refused).rejects.toBeInstanceOf(NotFoundError);
        await expect(refused).rejects.toMatchObject({ status: 404, param: "query_id", code: "query_not_found" });
      }
      expect(calls.starts).toEqual([]);
      expect(await owners.get("q-alice")).toEqual({ principal: "alice", workspace: "acme" });
      // A continuation found for the caller (not named by it) is its own already: not checked.
      await answerOf(runner, orderOf(shared("alice"), { input: { continueQueryId: "q-found" } }));
      expect(calls.starts).toHaveLength(1);
    });

    it("passes only the listed create fields; with the caller's own credential, the workspace decides and nothing is kept", async () => {
      const { service, calls } = fakeAnswers(EVENTS);
      const owners = new MemoryQueryOwnerStore(100);
      const runner = runnerOf(service, undefined, owners);
      const fields = { createFields: { follow_up: true, artifacts: { ids: ["a-1"] } } };
      const refused = answerOf(runner, orderOf(shared("alice"), { input: fields }));
      await expect(refused).rejects.toBeInstanceOf(RequestValidationError);
      await expect(refused).rejects.toMatchObject({ issues: [expect.objectContaining({ loc: ["body", "query", "artifacts"], type: "extra_forbidden" })] });
      await answerOf(runner, orderOf(shared("alice"), { input: { createFields: { follow_up: true } } }));
      await answerOf(runner, orderOf(identity, { input: { ...fields, continueQueryId: "q-anyone" }, namesQuery: true }));
      expect(calls.starts.map((job) => job.plan.queries[0]?.createBody)).toEqual([
        { follow_up: true, content: input.prompt, id: "q-1", mode: "ask" },
        { follow_up: true, artifacts: { ids: ["a-1"] }, content: input.prompt, id: "q-anyone", mode: "ask" },
      ]);
      expect(await owners.get("q-anyone")).toBeNull();
    });
  });
});

/** A collect encoder: the text, finished once its query finished. */
function collector(): CollectEncoder & { text: string } {
  return {
    text: "",
    finished: false,
    add(event) {
      if (event.type === "text") this.text += event.text;
      if (event.type === "finished") (this as { finished: boolean }).finished = true;
    },
    sent() {
      return [{ content: this.text }] as ChoiceSent[];
    },
  };
}

describe("collect (MCP tool results)", () => {
  const order = (response: MemoryResponse, usageMeter: UsageMeter, trace?: AnswerTrace) => ({
    context: targetOf(response, trace).context,
    identity,
    workspace: "acme",
    meter: usageMeter,
    input,
    spanStart: { operation: "execute_tool", tool: "ask", model: "ask", stream: false } as const,
  });

  it("collects the answer with progress (started, each event, done) and charges its usage once", async () => {
    const { trace, told } = fakeTrace();
    const { service, calls } = fakeAnswers(EVENTS);
    const { usageMeter, charges } = meter(true);
    const response = new MemoryResponse();
    const progress: string[] = [];
    const sink = {
      started: async (queryId: string) => void progress.push(`started ${queryId}`),
      event: async (event: AnswerEvent) => void progress.push(event.type),
      done: () => void progress.push("done"),
    };
    const encoder = collector();
    const runner = runnerOf(service);
    const result = await runner.run(runner.plan(order(response, usageMeter, trace)), collect(encoder, { progress: sink, shutdown: () => undefined }));
    expect(result).toBe(encoder);
    expect(encoder.text).toBe("Hello");
    expect(progress).toEqual(["started q-1", "text", "cited", "finished", "done"]);
    expect(response.headers["service-query-id"]).toBeUndefined();
    expect(calls.starts[0]?.usageNeeded).toBe(true);
    await expect((told.delivered[0] as [unknown, () => Promise<TokenUsage>])[1]()).resolves.toEqual(USAGE);
    expect([calls.usage, charges.length]).toEqual([1, 1]);
    expect(response.log).toEqual([]);
  });

  it("returns a failure, a shutdown or an unfinished answer as the error, never throwing", async () => {
    const failing = fakeAnswers([{ type: "failed", error: new QueryFailedError("boom") }]);
    const response = new MemoryResponse();
    const collecting = (runner: AnswerRunner, ordered: ReturnType<typeof order>, shutdown: () => QueryFailedError | undefined) =>
      runner.run(runner.plan(ordered), collect(collector(), { shutdown }));
    const failed = await collecting(runnerOf(failing.service), order(response, meter(false).usageMeter), () => undefined);
    expect(failed).toBeInstanceOf(QueryFailedError);

    const unfinished = fakeAnswers([{ type: "text", choice: 0, text: "He" }]);
    const charged = meter(true);
    const left = await collecting(runnerOf(unfinished.service), order(new MemoryResponse(), charged.usageMeter), () => undefined);
    expect(left).toBeInstanceOf(ClientClosedError);
    // The client left while its query ran on upstream: charged once, at least the answer expected of its mode.
    await waitFor(() => (charged.charges.length > 0 ? true : undefined), "the unfinished answer's charge");
    expect(unfinished.calls.usage).toBe(1);
    expect(charged.charges).toEqual([{ ...USAGE, completionTokens: 500 }]);

    const stopping = new QueryFailedError("shutting down");
    const shut = await collecting(runnerOf(unfinished.service), order(new MemoryResponse(), meter(false).usageMeter), () => stopping);
    expect(shut).toBe(stopping);
  });
});
