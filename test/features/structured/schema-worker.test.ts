import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";
import type { SchemaService } from "../../../src/structured/schema-service.js";
import { SCHEMA_WORKER_LIMITS, type SchemaWorkerLimits, workerSchemas } from "../../../src/structured/schema-worker-pool.js";
import { projectRoot } from "../../../src/util/package-info.js";

// The caller's schemas are checked and answers validated on a worker thread
// (docs/structured-answers.md#the-schema-is-untrusted): however long a schema takes to check, the
// event loop that serves every other request is not held up by it, and a schema that exhausts the
// worker's memory ends the worker, not the adapter.

/**
 * A schema the adapter accepts that takes a while to check: 9,000 properties, about 870 KB of JSON
 * (`STRUCTURED_SCHEMA_MAX_BYTES` allows 1 MB; the embedded workspace takes a query of 1 MB, the
 * schema's instruction block included).
 */
function largeSchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0; index < 9_000; index += 1) {
    properties[`field_${index}`] = { type: "string", description: `The value of field ${index}, as the document says it.` };
  }
  return { type: "object", properties };
}

const LARGE = { STRUCTURED_SCHEMA_MAX_BYTES: "1048576", BODY_LIMIT_BYTES: "2097152" };
const WORKER_FILE = join(projectRoot(), "dist/src/structured/schema-worker.js");

/** The compiled schema worker with these limits, for schemas of up to `maxBytes`. */
function worker(limits: Partial<SchemaWorkerLimits>, maxBytes = 1_048_576): SchemaService {
  return workerSchemas({ maxBytes, maxDepth: 24 }, { ...SCHEMA_WORKER_LIMITS, ...limits }, WORKER_FILE);
}

/** Runs `work` while timers of 2 ms are watched: the longest the event loop made one wait past its time, and how long `work` took. */
async function watchingTheLoop(work: () => Promise<void>): Promise<{ longestStallMs: number; elapsedMs: number }> {
  let longestStallMs = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longestStallMs = Math.max(longestStallMs, now - last - 2);
    last = now;
  }, 2);
  const started = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return { longestStallMs, elapsedMs: performance.now() - started };
}

describe("schemas off the event loop", () => {
  let stack: Stack;
  beforeAll(async () => {
    // The default limits but a longer time: a machine busy with other work may take seconds to check this schema.
    stack = await startStack(LARGE, {}, { schemas: worker({ taskTimeoutMs: 120_000 }) });
  });
  afterAll(() => stack.close());

  it("keeps the loop serving while the largest accepted schema is checked: the check's time is not one stall", async () => {
    const schema = largeSchema();
    const body = JSON.stringify(chatBody("List the fields", { response_format: { type: "json_schema", json_schema: { name: "fields", schema } } }));
    const before = stack.workspace.control.creates.length;
    let answered: Promise<Response> | undefined;
    // From the request's start until the workspace is asked: reading, admission, the schema's check, the plan.
    const watched = await watchingTheLoop(async () => {
      answered = fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body });
      let settled = false;
      void answered.then(
        () => (settled = true),
        () => (settled = true),
      );
      // The workspace asked (or, should the request fail, its answer: the status below says why).
      await waitFor(() => stack.workspace.control.creates.length > before || settled, "the workspace asked", { intervalMs: 2, timeoutMs: 120_000 });
    });
    const response = await (answered as Promise<Response>);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    // Checked on the event loop, the check was one stall of about 60 % of that time (210–250 ms of 330–400, quiet machine); on the worker the
    // longest stall is the body's parse and the schema's copy to the worker (about 10 %: 37–42 ms of 400–440).
    expect(watched.longestStallMs).toBeLessThan(watched.elapsedMs / 3);
  }, 150_000);
});

describe("a schema that exhausts the worker's memory", () => {
  let stack: Stack;
  beforeAll(async () => {
    // A worker of 16 MB: the large schema needs more to check, an ordinary one far less.
    stack = await startStack(LARGE, {}, { schemas: worker({ taskTimeoutMs: 60_000, heapMb: 16 }) });
  });
  afterAll(() => stack.close());

  it("is a 400 naming the parameter; the worker starts again and the next schema is answered", async () => {
    const before = stack.workspace.control.creates.length;
    const costly = chatBody("List the fields", { response_format: { type: "json_schema", json_schema: { name: "fields", schema: largeSchema() } } });
    const refused = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(costly) });
    const parsed = (await refused.json()) as { error: { param: string; code: string; message: string } };
    expect(refused.status).toBe(400);
    expect(parsed.error).toMatchObject({ param: "response_format", code: "invalid_json_schema" });
    expect(parsed.error.message).toMatch(/too costly to check: checking it needs more than 16 MB/);
    expect(stack.workspace.control.creates.length).toBe(before);

    const schema = { type: "object", properties: { days: { type: "integer" } }, required: ["days"], additionalProperties: false };
    const ordinary = chatBody("How many days of leave?", { response_format: { type: "json_schema", json_schema: { name: "leave", strict: true, schema } } });
    const answered = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(ordinary) });
    expect(answered.status).toBe(200);
    const completion = (await answered.json()) as { choices: { message: { content: string } }[] };
    expect(JSON.parse(completion.choices[0]?.message.content ?? "")).toEqual({ days: expect.any(Number) });
  });
});

describe("a schema check past the worker's time", () => {
  let stack: Stack;
  beforeAll(async () => {
    // 1 ms: no check, not even the worker's start, fits in it.
    stack = await startStack({}, {}, { schemas: worker({ taskTimeoutMs: 1 }, 65_536) });
  });
  afterAll(() => stack.close());

  it("is stopped, and is a 400 naming the parameter that asked, before any workspace query", async () => {
    const before = stack.workspace.control.creates.length;
    const schema = { type: "object", properties: { days: { type: "integer" } } };
    const body = { model: "ask", input: "How many days?", text: { format: { type: "json_schema", name: "leave", schema } } };
    const refused = await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const parsed = (await refused.json()) as { error: { param: string; code: string; message: string } };
    expect(refused.status).toBe(400);
    expect(parsed.error).toMatchObject({ param: "text.format", code: "invalid_json_schema" });
    expect(parsed.error.message).toMatch(/too costly to check: checking it took longer than 1 ms/);
    expect(stack.workspace.control.creates.length).toBe(before);
  });
});

describe("a full queue of schema work", () => {
  it("refuses the task past the bound as busy (the route's 503), and takes work again once the queue drains", async () => {
    // No task may wait: while the first check runs (the worker's start included), a second is refused.
    const schemas = worker({ taskTimeoutMs: 60_000, maxQueue: 0 }, 65_536);
    try {
      const [first, second] = await Promise.all([schemas.check({ type: "object", title: "first" }), schemas.check({ type: "object", title: "second" })]);
      expect(first).toBeNull();
      expect(second).toMatchObject({ busy: true, message: "The adapter is busy checking other schemas; try again shortly." });
      expect(await schemas.check({ type: "object", title: "third" })).toBeNull();
    } finally {
      await schemas.close();
    }
  });
});
