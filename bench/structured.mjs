// The benchmark's structured-answer scenario (docs/structured-answers.md): the adapter's CPU per
// request for the same answer asked in prose and as JSON that matches a schema (response_format
// json_schema), on the instant upstream, which writes the same answer as JSON when the question
// carries the instruction block; and, measured in this process on the adapter's own functions, what
// a request without a schema now pays (reading that it asks for none), what checking a new schema
// costs, and what taking the JSON out of an answer and validating it costs. Adapters take turns in
// every round; medians over rounds.
import { loadavg } from "node:os";
import { readChatStructured } from "../dist/src/dialects/chat-completions/structured-request.js";
import { judgeAnswer } from "../dist/src/answer/judge-answer.js";
import { inProcessSchemas } from "../dist/src/structured/schema-service.js";
import { SchemaValidation } from "../dist/src/structured/schema-validator.js";
import { workerSchemas } from "../dist/src/structured/schema-worker-pool.js";
import { chatRounds, LOADED_ADAPTER, nanosPerCall } from "./processes.mjs";

const ROUNDS = Number(process.env.BENCH_STRUCTURED_ROUNDS ?? 3);
const SEQUENTIAL = 500;
const LOAD_SECONDS = Number(process.env.BENCH_STRUCTURED_SECONDS ?? 4);
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };
const question = "How much annual leave do employees get, how does remote work go, and how are incidents reported?";
const text = { type: "string" };
const object = (properties) => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });
// The schema zod writes for the instant upstream's JSON answer (strict, as the openai SDK sends it).
const schema = object({
  leave: object({ days: { type: "integer" }, summary: text, carryOver: text }),
  remoteWork: object({ daysPerWeek: { type: "integer" }, summary: text, equipment: text }),
  incidents: { type: "array", items: object({ deadline: text, summary: text }) },
});
const responseFormat = { type: "json_schema", json_schema: { name: "policies", strict: true, schema } };
/** The same chat completion asked in prose and as JSON for the schema (bench/cpu.mjs sends the structured one too). */
export const bodies = {
  prose: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }),
  structured: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }], response_format: responseFormat }),
  /** The instant upstream's answer as JSON (what `functionCosts` validates). */
  answer: JSON.stringify({
    leave: { days: 25, summary: "Employees receive 25 days of paid annual leave per calendar year [1].", carryOver: "Unused leave of up to 5 days carries over [1]." },
    remoteWork: { daysPerWeek: 3, summary: "Remote work is allowed up to three days per week [2].", equipment: "Equipment is reimbursed up to 500 euros once [2]." },
    incidents: [{ deadline: "one hour", summary: "Security incidents are reported within one hour [3]." }],
  }),
};

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Nanoseconds per call of an asynchronous `run`, awaited one after another (the median of 7 batches). */
async function nanosPerAsyncCall(run, iterations) {
  const batches = [];
  for (let batch = 0; batch < 7; batch += 1) {
    const started = process.hrtime.bigint();
    for (let index = 0; index < iterations; index += 1) await run(index);
    batches.push(Number(process.hrtime.bigint() - started) / iterations);
  }
  return round(median(batches), 1);
}

/** The adapter's structured functions, timed in this process. */
async function functionCosts() {
  const limits = { maxBytes: 65_536, maxDepth: 24 };
  const validation = new SchemaValidation(limits);
  const check = (value) => validation.check(value);
  const ordinary = { model: "ask", messages: [{ role: "user", content: question }] };
  const withTools = { ...ordinary, tools: [{ type: "function", function: { name: "lookup", parameters: schema } }], tool_choice: "auto" };
  const asked = { ...ordinary, response_format: responseFormat };
  const output = "{\"leave\": {\"days\": 25, \"summary\": \"Employees receive 25 days of paid annual leave per calendar year [1].\", \"carryOver\": \"Unused leave of up to 5 days carries over [1].\"}, \"remoteWork\": {\"daysPerWeek\": 3, \"summary\": \"Remote work is allowed up to three days per week [2].\", \"equipment\": \"Equipment is reimbursed up to 500 euros once [2].\"}, \"incidents\": [{\"deadline\": \"one hour\", \"summary\": \"Security incidents are reported within one hour [3].\"}]}\n\nSources:\n[1] handbook.md — Leave policy\n[2] handbook.md — Remote work\n[3] security-policy.md — Incident reporting";
  const request = readChatStructured(asked, check);
  // The judge as the unit tests run it, on this thread: what the worker does per answer.
  const service = inProcessSchemas(limits);
  return {
    // What every request without a schema pays now: reading that it asks for none.
    noSchemaNs: nanosPerCall(() => readChatStructured(ordinary, check), 500_000),
    toolsAutoNs: nanosPerCall(() => readChatStructured(withTools, check), 200_000),
    // A schema seen for the first time (checked, compiled) and one kept by its hash.
    newSchemaUs: round(nanosPerCall((index) => new SchemaValidation(limits).check({ ...schema, title: `t${index}` }), 2_000) / 1000, 1),
    knownSchemaUs: round(nanosPerCall(() => readChatStructured(asked, check), 20_000) / 1000, 2),
    // One answer taken out, validated, its citations found.
    judgeUs: round((await nanosPerAsyncCall(() => judgeAnswer(output, [], request, service, false), 20_000)) / 1000, 1),
  };
}

/**
 * Milliseconds of CPU (this process's, user and system: what blocks its event loop, less the waits a
 * busy machine adds to wall time) of the slowest and the median of `runs` calls of `run(index)`.
 */
function millis(run, runs) {
  const times = [];
  let result;
  for (let index = 0; index < runs; index += 1) {
    const started = process.cpuUsage();
    result = run(index);
    const spent = process.cpuUsage(started);
    times.push((spent.user + spent.system) / 1000);
  }
  return { maxMs: round(Math.max(...times), 2), medianMs: round(median(times), 2), result: JSON.stringify(result)?.slice(0, 100) ?? "null" };
}

/**
 * The worst cases of the schema check and of an answer's validation (docs/structured-answers.md#the-schema-is-untrusted),
 * in this process on the adapter's own functions, each on a schema never seen: the 999-character pattern of
 * counted repetitions (`x{1,1000}` repeated) as a `pattern` and as a `patternProperties` key, the largest schema
 * accepted (64 KB, 1,500 properties, patterns up to the program budget), and answers that multiply the
 * validator's work (`uniqueItems` over 20,000 strings, a union nested 20 deep). `BENCH_ONLY=schemas`.
 */
export async function schemaWorstCases() {
  const limits = { maxBytes: 65_536, maxDepth: 24 };
  const huge = "x{1,1000}".repeat(111).slice(0, 999);
  const fresh = () => new SchemaValidation(limits);
  const properties = {};
  for (let index = 0; index < 1400; index += 1) properties[`field_${index}`] = { type: "string" };
  // Two patterns of about 2,000 instructions, then small distinct ones until the schema's budget is spent.
  const patterns = ["^a.{1,1000}$", "^b.{1,1000}$", ...Array.from({ length: 60 }, (_, index) => `^[A-Z]{3}-${index}\\d{2,4}$`)];
  patterns.forEach((pattern, index) => (properties[`field_${index}`] = { type: "string", pattern }));
  const largest = (nonce) => {
    const schema = { type: "object", description: `n${nonce}`, properties: { ...properties }, additionalProperties: false };
    // Keep the patterns the budget accepts (the adapter before the budget accepted them all).
    for (let kept = patterns.length; kept > 0 && fresh().check(schema) !== null; kept -= 1) schema.properties[`field_${kept - 1}`] = { type: "string" };
    return schema;
  };
  const accepted = Array.from({ length: 10 }, (_, nonce) => largest(nonce));
  const validation = fresh();
  validation.check(schema);
  const branch = { type: "object", properties: { a: { $ref: "#/$defs/n" } } };
  const union = { $defs: { n: { oneOf: [branch, { ...branch, required: ["a"] }, { ...branch, minProperties: 1 }] } }, $ref: "#/$defs/n" };
  let deep = {};
  for (let level = 0; level < 20; level += 1) deep = { a: deep };
  const unique = { type: "array", items: { type: "string" }, uniqueItems: true };
  const strings = Array.from({ length: 20_000 }, (_, index) => `item ${index}`);
  const answer = JSON.parse(bodies.answer);
  const onWorker = await workerWorstCases({ limits, accepted: accepted.map((item) => ({ ...item, description: `w${item.description}` })), union, deep, schema, answer });
  return {
    onWorker,
    hugePattern: millis((index) => fresh().check({ type: "object", description: `h${index}`, properties: { a: { type: "string", pattern: huge } } }), 3),
    hugePatternProperty: millis((index) => fresh().check({ type: "object", description: `p${index}`, patternProperties: { [huge]: { type: "string" } } }), 3),
    largestAccepted: { bytes: JSON.stringify(accepted[0]).length, patterns: Object.values(accepted[0].properties).filter((item) => item.pattern).length, ...millis((index) => fresh().check(accepted[index]), accepted.length) },
    typicalValidationUs: round(nanosPerCall(() => validation.validate(schema, answer), 20_000) / 1000, 2),
    uniqueItems20000: millis(() => validation.validate(unique, strings), 1),
    unionNested20: millis(() => validation.validate(union, deep), 3),
  };
}

/**
 * What the event loop bears while the schema worker (dist/src/structured/schema-worker-pool.js, as
 * `npm start` runs it) checks the largest schema accepted and validates the union nested 20 deep:
 * the event loop's thread's CPU from the call to its answer (`mainCpuMs`, process.threadCpuUsage: a
 * bound on its longest hold), the longest it was held at once as wall time shows it (`stallMs`: the
 * sending call's own time, or a 1 ms timer's worst lateness, which a busy machine inflates), beside
 * the work's time on the worker (`elapsedMs`, wall);
 * and what one structured request pays for the round trip, a kept schema checked and the typical
 * answer validated (`roundTrip`: wall µs and the event loop's busy µs per pair, from its utilization).
 */
async function workerWorstCases({ limits, accepted, union, deep, schema, answer }) {
  const service = workerSchemas(limits);
  try {
    await service.check(schema); // the worker started, the typical schema kept
    const watch = async (call, runs) => {
      const stalls = [];
      const elapsed = [];
      const mainCpu = [];
      // The loop's CPU first, with no timer of the bench's own on it; then the same work again, watched by the timer.
      for (let index = 0; index < runs; index += 1) {
        const cpuBefore = process.threadCpuUsage();
        await call(index);
        const cpu = process.threadCpuUsage(cpuBefore);
        mainCpu.push((cpu.user + cpu.system) / 1000);
      }
      for (let index = runs; index < 2 * runs; index += 1) {
        let worst = 0;
        let last = performance.now();
        const timer = setInterval(() => {
          const now = performance.now();
          worst = Math.max(worst, now - last - 1);
          last = now;
        }, 1);
        const started = performance.now();
        const pending = call(index);
        const sending = performance.now() - started;
        await pending;
        elapsed.push(performance.now() - started);
        clearInterval(timer);
        stalls.push(Math.max(sending, worst));
      }
      return {
        // Every CPU millisecond this thread spent from the call to its answer: a bound on the longest hold that a busy machine does not inflate.
        mainCpuMs: round(Math.max(...mainCpu), 2),
        mainCpuMedianMs: round(median(mainCpu), 2),
        stallMs: round(Math.max(...stalls), 2),
        stallMedianMs: round(median(stalls), 2),
        elapsedMs: round(median(elapsed), 2),
      };
    };
    const largestAccepted = await watch((index) => service.check(accepted[index]), accepted.length / 2);
    await service.check(union);
    const unionNested20 = await watch(() => service.validate(union, deep), 3);
    const pairs = 2_000;
    const busyBefore = performance.eventLoopUtilization();
    const started = performance.now();
    for (let index = 0; index < pairs; index += 1) {
      await service.check(schema);
      await service.validate(schema, answer);
    }
    const wallUs = ((performance.now() - started) * 1000) / pairs;
    const busyUs = (performance.eventLoopUtilization(busyBefore).active * 1000) / pairs;
    return { largestAccepted, unionNested20, roundTrip: { wallUs: round(wallUs, 1), loopBusyUs: round(busyUs, 1) } };
  } finally {
    await service.close();
  }
}

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function structuredCost(start) {
  const loadBefore = round(loadavg()[0], 2);
  const upstream = await start("instant-upstream.mjs");
  const adapter = await start("adapter-process.mjs", { UPSTREAM_URL: upstream.url, ...LOADED_ADAPTER });
  const runs = { prose: [adapter, bodies.prose], structured: [adapter, bodies.structured] };
  const { rows, rounds } = await chatRounds(runs, { headers, rounds: ROUNDS, sequential: SEQUENTIAL, seconds: LOAD_SECONDS, label: "structured" });
  adapter.child.kill();
  upstream.child.kill();
  const row = (name) => rows[name];
  const prose = row("prose");
  const structured = row("structured");
  const functions = await functionCosts();
  return {
    date: new Date().toISOString(),
    loadAverage: [loadBefore, round(loadavg()[0], 2)],
    rounds: ROUNDS,
    seconds: LOAD_SECONDS,
    prose,
    structured,
    addedCpuUs: round(median(rounds.map((figures) => figures.structured.cpuUs - figures.prose.cpuUs))),
    functions: { ...functions, noSchemaShareOfRequestCpu: round((functions.noSchemaNs / 1000 / prose.cpuUs) * 100, 3) },
  };
}

