// What a setting costs on the chat path against the instant upstream: adapters started with different
// environments take turns, in every round, at one request at a time (p50) and at 50 connections
// (requests/s, the adapter's CPU per request, and a Redis's when one is named); the costs are the
// medians of the per-round differences from the first adapter (the one without the setting). The
// machine is shared and noisy: taking turns, and alternating the order, keeps the comparison fair.
// Used by the rate limits' part (rate-limits.mjs) and governance's (governance.mjs).
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { sequentialLatencies, statsOf } from "./processes.mjs";

const SEQUENTIAL = 500;
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };
const body = JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] });

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value) => Math.round(value);

/** CPU time (user + system) of a process, in microseconds, from /proc (Linux). */
export function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/** p50 latency of one request at a time, in microseconds. */
async function sequentialP50(adapter) {
  return median(await sequentialLatencies(`${adapter.url}/v1/chat/completions`, { headers, body: adapter.body ?? body, count: SEQUENTIAL }));
}

/** 50 connections for `seconds`: requests/s, the adapter's CPU per request, and Redis's. */
async function loaded(adapter, redisPid, seconds) {
  const before = await statsOf(adapter.child);
  const redisBefore = redisPid ? cpuMicros(redisPid) : 0;
  const result = await autocannon({ url: `${adapter.url}/v1/chat/completions`, method: "POST", headers, body: adapter.body ?? body, connections: 50, duration: seconds });
  if (result.errors || result.non2xx) throw new Error(`${adapter.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  const after = await statsOf(adapter.child);
  const requests = after.requests - before.requests;
  return {
    rps: result.requests.average,
    cpuUs: (after.cpuMicros - before.cpuMicros) / requests,
    redisCpuUs: redisPid ? (cpuMicros(redisPid) - redisBefore) / requests : 0,
  };
}

/**
 * Rounds over `adapters` (name → started adapter process, with the chat body it is sent when not the
 * usual question; the first is the reference), each measured one at a time and under load; `redisPid(name)` names the Redis whose CPU a row counts.
 * Returns a row per adapter: medians, and the medians of the per-round differences from the first.
 */
export async function configCost(adapters, { rounds, seconds, label, redisPid = () => undefined }) {
  const names = Object.keys(adapters);
  const reference = names[0];
  for (const name of names) await autocannon({ url: `${adapters[name].url}/v1/chat/completions`, method: "POST", headers, body: adapters[name].body ?? body, connections: 50, duration: 2 }); // warm-up
  const figures = [];
  for (let index = 0; index < rounds; index += 1) {
    const round = {};
    for (const name of index % 2 ? [...names].reverse() : names) {
      round[name] = { p50Us: await sequentialP50(adapters[name]), ...(await loaded(adapters[name], redisPid(name), seconds)) };
    }
    figures.push(round);
    console.log(`${label} round ${index + 1}: ${JSON.stringify(round)}`);
  }
  const row = (name) => ({
    p50Us: round(median(figures.map((each) => each[name].p50Us))),
    rps: round(median(figures.map((each) => each[name].rps))),
    cpuUs: round(median(figures.map((each) => each[name].cpuUs))),
    ...(redisPid(name) ? { redisCpuUs: round(median(figures.map((each) => each[name].redisCpuUs))) } : {}),
    addedP50Us: round(median(figures.map((each) => each[name].p50Us - each[reference].p50Us))),
    addedCpuUs: round(median(figures.map((each) => each[name].cpuUs - each[reference].cpuUs))),
    rpsShareOfUnset: Math.round(median(figures.map((each) => each[name].rps / each[reference].rps)) * 1000) / 1000,
  });
  return Object.fromEntries(names.map((name) => [name, row(name)]));
}
