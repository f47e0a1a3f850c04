// The MCP endpoint's costs (`npm run bench`, or `BENCH_ONLY=mcp`): what one `ask` tool call costs
// the adapter over one chat completion of the same answer, and what 500 tool calls waiting at once
// hold. CPU is the adapter process's own (user + system, from its IPC stats), per request, in
// rounds that take turns between the kinds of request, so that each comparison shares the shared
// machine's mood of the moment; the medians over rounds are reported.
import autocannon from "autocannon";
import { request } from "undici";
import { holdOpen, LOADED_ADAPTER, startWorkspaceAndAdapter, statsOf } from "./processes.mjs";

const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const question = "How much annual leave do employees get?";
const auth = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };

/** A tools/call of `ask` as a 2025-11-25 client sends it (no initialize needed: the endpoint is stateless). */
export function legacyCall(progress) {
  const params = { name: "ask", arguments: { question }, ...(progress ? { _meta: { progressToken: 1 } } : {}) };
  return {
    headers: { ...auth, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }),
  };
}

/** The same call as a 2026-07-28 client sends it: the per-request `_meta` envelope and its headers. */
export function modernCall() {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  return {
    headers: { ...auth, accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "ask" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: { question }, _meta: meta } }),
  };
}

/**
 * One `ask` tool call against one chat completion of the same answer (the instant upstream: a
 * finished, cited 1 KB answer), at 50 connections: the adapter's CPU per request for each kind,
 * and what a tool call adds.
 */
export async function toolCallCost(start, { seconds, repeats }) {
  const upstream = await start("instant-upstream.mjs");
  const adapter = await start("adapter-process.mjs", { UPSTREAM_URL: upstream.url, ...LOADED_ADAPTER });
  const kinds = {
    chat: { url: `${adapter.url}/v1/chat/completions`, headers: auth, body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }) },
    mcp20251125: { url: `${adapter.url}/mcp`, ...legacyCall(false) },
    mcp20260728: { url: `${adapter.url}/mcp`, ...modernCall() },
  };
  const once = async (kind, duration) => {
    const before = await statsOf(adapter.child);
    const result = await autocannon({ url: kind.url, method: "POST", headers: kind.headers, body: kind.body, connections: 50, duration });
    const after = await statsOf(adapter.child);
    if (result.errors || result.non2xx) throw new Error(`${kind.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
    const requests = after.requests - before.requests;
    return { rps: result.requests.average, cpuUs: (after.cpuMicros - before.cpuMicros) / requests, loopUs: ((after.loopActiveMs - before.loopActiveMs) * 1000) / requests };
  };
  for (const kind of Object.values(kinds)) await once(kind, 2); // warm-up, discarded
  const rounds = [];
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    const figures = {};
    for (const [name, kind] of Object.entries(kinds)) figures[name] = await once(kind, seconds);
    rounds.push(figures);
  }
  for (const { child } of [upstream, adapter]) child.kill();
  const summary = {};
  for (const name of Object.keys(kinds)) {
    summary[name] = {
      rps: round(median(rounds.map((figures) => figures[name].rps)), 0),
      cpuUsPerCall: round(median(rounds.map((figures) => figures[name].cpuUs)), 0),
      eventLoopUsPerCall: round(median(rounds.map((figures) => figures[name].loopUs)), 0),
      cpuRuns: rounds.map((figures) => round(figures[name].cpuUs, 0)),
    };
  }
  const added = (name) => round(median(rounds.map((figures) => figures[name].cpuUs - figures.chat.cpuUs)), 0);
  return { ...summary, addedCpuUsOverChat: { mcp20251125: added("mcp20251125"), mcp20260728: added("mcp20260728") } };
}

/**
 * 500 `ask` tool calls waiting at once on queries that never finish, each with a progress token
 * (so each is an SSE stream that gets a progress notification every second of silence): the
 * adapter's RSS, highest while they open and stay open 10 s, and its event-loop delay p99.
 */
export async function waitingToolCalls(start, count = 500, keepAliveMs = 1000) {
  const { workspace, adapter } = await startWorkspaceAndAdapter(start, {
    SSE_KEEPALIVE_MS: String(keepAliveMs),
    MAX_CONCURRENT_REQUESTS: "100000",
    MAX_CONCURRENT_PER_WORKSPACE: "100000",
  });
  // A finished call first, so that the baseline has everything a serving adapter has loaded.
  const warm = await request(`${adapter.url}/mcp`, { method: "POST", ...legacyCall(false) });
  if (warm.statusCode !== 200) throw new Error(`warm-up tool call: ${warm.statusCode}`);
  await warm.body.text();
  const baseline = await statsOf(adapter.child);
  let progress = 0;
  const call = legacyCall(true);
  const { stats, peakRssBytes } = await holdOpen(
    adapter.child,
    count,
    (index, dispatcher, signal) => {
      const body = JSON.parse(call.body);
      body.params.arguments.question = `leave ${index} [fault:stall]`;
      return request(`${adapter.url}/mcp`, { method: "POST", headers: call.headers, body: JSON.stringify(body), dispatcher, signal }).then(async (response) => {
        for await (const chunk of response.body) progress += String(chunk).split("notifications/progress").length - 1;
      });
    },
    (stats) => stats.waitingQueries >= count,
  );
  for (const { child } of [workspace, adapter]) child.kill();
  return {
    calls: stats.waitingQueries,
    progressNotificationsReceived: progress,
    rssMB: round(stats.rssBytes / 2 ** 20),
    peakRssMB: round(peakRssBytes / 2 ** 20),
    baselineRssMB: round(baseline.rssBytes / 2 ** 20),
    heapUsedMB: round(stats.heapUsedBytes / 2 ** 20),
    eventLoopDelayP99Ms: round(stats.eventLoopDelayP99Ms, 2),
    eventLoopDelayMaxMs: round(stats.eventLoopDelayMaxMs, 2),
  };
}
