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
import { SchemaValidation } from "../dist/src/structured/schema-validator.js";
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
};

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The adapter's structured functions, timed in this process. */
function functionCosts() {
  const limits = { maxBytes: 65_536, maxDepth: 24 };
  const validation = new SchemaValidation(limits);
  const check = (value) => validation.check(value);
  const ordinary = { model: "ask", messages: [{ role: "user", content: question }] };
  const withTools = { ...ordinary, tools: [{ type: "function", function: { name: "lookup", parameters: schema } }], tool_choice: "auto" };
  const asked = { ...ordinary, response_format: responseFormat };
  const output = "{\"leave\": {\"days\": 25, \"summary\": \"Employees receive 25 days of paid annual leave per calendar year [1].\", \"carryOver\": \"Unused leave of up to 5 days carries over [1].\"}, \"remoteWork\": {\"daysPerWeek\": 3, \"summary\": \"Remote work is allowed up to three days per week [2].\", \"equipment\": \"Equipment is reimbursed up to 500 euros once [2].\"}, \"incidents\": [{\"deadline\": \"one hour\", \"summary\": \"Security incidents are reported within one hour [3].\"}]}\n\nSources:\n[1] handbook.md — Leave policy\n[2] handbook.md — Remote work\n[3] security-policy.md — Incident reporting";
  const request = readChatStructured(asked, check);
  return {
    // What every request without a schema pays now: reading that it asks for none.
    noSchemaNs: nanosPerCall(() => readChatStructured(ordinary, check), 500_000),
    toolsAutoNs: nanosPerCall(() => readChatStructured(withTools, check), 200_000),
    // A schema seen for the first time (checked, compiled) and one kept by its hash.
    newSchemaUs: round(nanosPerCall((index) => new SchemaValidation(limits).check({ ...schema, title: `t${index}` }), 2_000) / 1000, 1),
    knownSchemaUs: round(nanosPerCall(() => readChatStructured(asked, check), 20_000) / 1000, 2),
    // One answer taken out, validated, its citations found.
    judgeUs: round(nanosPerCall(() => judgeAnswer(output, [], request, validation, false), 20_000) / 1000, 1),
  };
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
  const functions = functionCosts();
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

