// docs/benchmarks.md, written from the results of each Node version measured (bench/results/node-<major>.json):
// the machine and the Node versions, the command, one table of the current results against the targets,
// then each part's method in a few lines. The page holds no history of runs: that lives in git.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

/** Every Node version's results in `folder`, oldest Node first. */
export function readResults(folder) {
  let names = [];
  try {
    names = readdirSync(folder).filter((name) => /^node-\d+\.json$/.test(name));
  } catch {
    return [];
  }
  return names
    .map((name) => JSON.parse(readFileSync(new URL(name, folder), "utf8")))
    .sort((a, b) => majorOf(a.machine.node) - majorOf(b.machine.node));
}

/** The major version of a `process.version` string. */
export function majorOf(version) {
  return Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);
}

const µs = (value) => `${value} µs`;
const ms = (value) => `${value} ms`;
const times = (ratio) => `${ratio.median}× (${ratio.min}–${ratio.max})`;

/**
 * The table's rows: the part (its method's heading), what is measured, the target (none: recorded,
 * not judged), the figure from one Node version's results (undefined when that run has no such part),
 * and whether it meets the target.
 */
const ROWS = [
  ["latency", "added p50 latency over the upstream, one chat completion at a time", "≤ 500 µs", (r) => r.latency && µs(r.latency.addedP50Us.adapter), (r) => r.latency.addedP50Us.adapter <= 500],
  ["latency", "the same, Responses API", "≤ 500 µs", (r) => r.latency?.addedP50Us.responses !== undefined ? µs(r.latency.addedP50Us.responses) : undefined, (r) => r.latency.addedP50Us.responses <= 500],
  ["latency", "first streamed byte after the upstream's create answer (p50)", "≤ 1 ms", (r) => r.latency && µs(r.latency.firstStreamByteAfterCreateUs), (r) => r.latency.firstStreamByteAfterCreateUs <= 1000],
  ["latency", "chat completions a second at 50 connections", "≥ 5,000/s", (r) => r.latency && `${r.latency.fiftyConnections.adapter.rps}/s`, (r) => r.latency.fiftyConnections.adapter.rps >= 5000],
  ["latency", "share of the bare proxy's throughput, chat completions", "≥ 35%", (r) => r.latency && percent(r.latency.adapterShareOfBareProxy), (r) => r.latency.adapterShareOfBareProxy >= 0.35],
  ["latency", "share of the bare proxy's throughput, Responses API", "≥ 35%", (r) => r.latency?.responsesShareOfBareProxy !== undefined ? percent(r.latency.responsesShareOfBareProxy) : undefined, (r) => r.latency.responsesShareOfBareProxy >= 0.35],
  ["cpu", "CPU per chat completion, × the bare proxy's", "≤ 2.0×", (r) => r.cpu && `${times(r.cpu.ratios.chatOverBareProxy)}, ${µs(r.cpu.rows.chat.cpuUsPerRequest)}`, (r) => r.cpu.ratios.chatOverBareProxy.median <= 2],
  ["cpu", "CPU per Responses create, × the bare proxy's", "", (r) => r.cpu && times(r.cpu.ratios.responsesOverBareProxy)],
  ["cpu", "CPU per structured answer, × a chat completion's", "", (r) => r.cpu?.ratios.structuredOverChat && times(r.cpu.ratios.structuredOverChat)],
  ["cpu", "CPU per MCP `ask` call, × a chat completion's (2025-11-25; 2026-07-28)", "", (r) => r.cpu && `${times(r.cpu.ratios.mcp20251125OverChat)}; ${times(r.cpu.ratios.mcp20260728OverChat)}`],
  ["tracing", "CPU per chat completion traced at sampling 1.0, × tracing off", "≤ 1.5×", (r) => r.tracing && times(r.tracing.onOverOff), (r) => r.tracing.onOverOff.median <= 1.5],
  ["tracing", "CPU per chat completion traced at sampling 0.1, × tracing off", "≤ 1.1×", (r) => r.tracing?.sampledOverOff && times(r.tracing.sampledOverOff), (r) => r.tracing.sampledOverOff.median <= 1.1],
  ["tracing", "the same at sampling 0 (every trace dropped); a second untraced adapter, the same as the first (what the method tells apart)", "", (r) => r.tracing?.unsampledOverOff && `${times(r.tracing.unsampledOverOff)}; ${times(r.tracing.offAgainOverOff)}`],
  ["waiting", "list calls per poll, 1,000 requests waiting in one workspace", "one per poll, plus pages", (r) => r.waiting && `${r.waiting.at(-1).listCallsPerPoll} (${r.waiting.at(-1).pagesNeeded} pages)`, (r) => r.waiting.every((row) => row.listCallsPerPoll <= row.pagesNeeded + 0.05)],
  ["streams", "RSS with 5,000 idle streams (highest sample)", "< 300 MB", (r) => r.streams && `${r.streams.peakRssMB} MB`, (r) => r.streams.peakRssMB < 300],
  ["streams", "event-loop delay p99 with them open", "< 20 ms", (r) => r.streams && ms(r.streams.eventLoopDelayP99Ms), (r) => r.streams.eventLoopDelayP99Ms < 20],
  ["tokens", "longest event-loop block counting a 200 KB answer", "≤ 5 ms", (r) => r.tokens && ms(r.tokens.longestBlockMs), (r) => r.tokens.longestBlockMs <= 5],
  ["tokens", "counting the benchmark's answer: the adapter; tiktoken; gpt-tokenizer", "", (r) => r.tokens?.libraries && libraries(r.tokens.libraries, "answerUs", µs)],
  ["tokens", "counting the answer's gist in five other scripts (Cyrillic, Japanese, Arabic, Greek, Devanagari): the adapter; tiktoken; gpt-tokenizer", "", (r) => r.tokens?.libraries?.adapter?.otherScriptsUs && libraries(r.tokens.libraries, "otherScriptsUs", µs)],
  ["tokens", "counting docs/ in 600-character chunks, a chunk: the adapter; tiktoken; gpt-tokenizer", "", (r) => r.tokens?.libraries && libraries(r.tokens.libraries, "docsChunkUs", µs)],
  ["tokens", "counting a 200 KB answer at once: the adapter (in slices); tiktoken; gpt-tokenizer", "", (r) => r.tokens?.libraries && libraries(r.tokens.libraries, "longTextMs", ms)],
  ["tokens", "counting one 32,000-letter word: the adapter; tiktoken; gpt-tokenizer", "", (r) => r.tokens?.libraries && libraries(r.tokens.libraries, "longWordMs", ms)],
  ["realtime", "first content after the first publication, with the channel (p99)", "≤ 20 ms", (r) => r.realtime && ms(r.realtime.channel.firstContentAfterFirstPublication.p99Ms), (r) => r.realtime.channel.firstContentAfterFirstPublication.p99Ms <= 20],
  ["realtime", "answer ended after the query ended, with the channel (p99, streamed; plain)", "≤ 50 ms", (r) => r.realtime && `${ms(r.realtime.channel.streamEndAfterQueryEnded.p99Ms)}; ${ms(r.realtime.channel.plainAnswerAfterQueryEnded.p99Ms)}`, (r) => Math.max(r.realtime.channel.streamEndAfterQueryEnded.p99Ms, r.realtime.channel.plainAnswerAfterQueryEnded.p99Ms) <= 50],
  ["realtime", "event-loop delay p99, 1,000 streams with their channels open", "≤ 20 ms", (r) => r.channels && ms(r.channels.eventLoopDelayP99Ms), (r) => r.channels.eventLoopDelayP99Ms <= 20],
  ["replicas", "list calls per poll interval, 4 replicas sharing through Redis (each polling alone)", "as one replica", (r) => r.replicas?.redis ? `${replicaCalls(r, 4, true)} (${replicaCalls(r, 4, false)})` : undefined, (r) => replicaCalls(r, 4, true) <= replicaCalls(r, 1, true) * 1.1],
  ["redis", "follow-ups forked or refused with Redis slowed, bound 50 ms; 1000 ms", "none", (r) => r.redis?.rows && r.redis.rows.map((row) => `${row.forked + row.refused} of ${row.turns - r.redis.conversations}`).join("; "), (r) => r.redis.rows.every((row) => row.forked + row.refused === 0)],
  ["limits", "added CPU per request, all three limits in process; in Redis", "", (r) => r.limits && `${µs(r.limits.inProcess.addedCpuUs)}; ${r.limits.redis ? µs(r.limits.redis.addedCpuUs) : "—"}`],
  ["governance", "added CPU per request: usage counted; and every answer audited; both with usage in Redis", "", (r) => r.governance && [r.governance.usage, r.governance.usageAndAudit, r.governance.redisUsageAndAudit].map((row) => (row ? µs(row.addedCpuUs) : "—")).join("; ")],
  ["ownership", "whose query it is, shared key: added CPU per request over pass-through, a new question; a follow-up by `query_id` (in process; Redis)", "", (r) => r.ownership && `${µs(r.ownership.shared.addedCpuUs)}; ${µs(r.ownership.sharedQueryId.addedCpuUs)} (${r.ownership.redis ? `${µs(r.ownership.redisShared.addedCpuUs)}; ${µs(r.ownership.redisSharedQueryId.addedCpuUs)}` : "—"})`],
  ["quotas", "a daily token quota, reserved at admission and settled: added CPU per request over none, in process; in Redis (all three token limits in Redis)", "", (r) => r.quotas && `${µs(r.quotas.inProcess.addedCpuUs)}; ${r.quotas.redis ? `${µs(r.quotas.redisDay.addedCpuUs)} (${µs(r.quotas.redisAll.addedCpuUs)})` : "—"}`],
  ["mcp", "500 `ask` calls waiting with progress: highest RSS; event-loop delay p99", "", (r) => r.mcp?.waiting && `${r.mcp.waiting.peakRssMB} MB; ${ms(r.mcp.waiting.eventLoopDelayP99Ms)}`],
  ["oauth", "an access token's validation: added CPU; added latency per tool call", "", (r) => r.oauth && `${µs(r.oauth.addedCpuUsByToken)}; ${µs(r.oauth.addedLatencyUsByToken)}`],
  ["chat-ui-tasks", "Open WebUI's title request: CPU answered by the adapter; passed on", "", (r) => r.chatUiTasks && `${µs(r.chatUiTasks.titleLocal.cpuUs)}; ${µs(r.chatUiTasks.titleByWorkspace.cpuUs)}`],
  ["structured", "a structured answer: added CPU over the same answer in prose", "", (r) => r.structured && µs(r.structured.addedCpuUs)],
  ["schemas", "the event loop's CPU while the worst schemas are on the worker: the largest accepted, checked; a union nested 20 deep, validated (their wall time on the worker)", "a few ms", (r) => r.schemas?.onWorker && `${ms(r.schemas.onWorker.largestAccepted.mainCpuMs)}; ${ms(r.schemas.onWorker.unionNested20.mainCpuMs)} (${ms(r.schemas.onWorker.largestAccepted.elapsedMs)}; ${ms(r.schemas.onWorker.unionNested20.elapsedMs)})`, (r) => Math.max(r.schemas.onWorker.largestAccepted.mainCpuMs, r.schemas.onWorker.unionNested20.mainCpuMs) <= 5],
  ["schemas", "on the schema worker, CPU: a 999-character counted-repetition `pattern` refused; the largest schema accepted, checked", "", (r) => r.schemas && `${ms(r.schemas.hugePattern.maxMs)}; ${ms(r.schemas.largestAccepted.maxMs)}`],
  ["schemas", "a structured request's round trips to the worker (a kept schema checked, the typical answer validated): event loop busy; wall", "", (r) => r.schemas?.onWorker && `${µs(r.schemas.onWorker.roundTrip.loopBusyUs)}; ${µs(r.schemas.onWorker.roundTrip.wallUs)}`],
  ["schemas", "validating an answer on the worker, CPU: typical; 20,000 strings under `uniqueItems` (refused by the budget)", "", (r) => r.schemas && `${µs(r.schemas.typicalValidationUs)}; ${ms(r.schemas.uniqueItems20000.maxMs)}`],
  ["background", "1,000 background answers in flight: heap; RSS per answer", "", (r) => r.background && `${r.background.inFlight.heapKBPerAnswer} KB; ${r.background.inFlight.rssKBPerAnswer} KB`],
  ["websocket", "a Responses turn at a time over a WebSocket: p50 latency; adapter CPU per turn (the same turn streamed over HTTP; as one JSON body)", "", (r) => r.websocket && `${µs(r.websocket.websocket.p50Us)}; ${µs(r.websocket.websocket.cpuUsPerTurn)} (${µs(r.websocket.sse.p50Us)}, ${µs(r.websocket.sse.cpuUsPerTurn)}; ${µs(r.websocket.json.p50Us)}, ${µs(r.websocket.json.cpuUsPerTurn)})`],
  ["websocket", "1,000 idle WebSockets: heap; RSS per socket", "", (r) => r.websocket?.idle && `${(r.websocket.idle.heapBytesPerSocket / 1024).toFixed(1)} KB; ${(r.websocket.idle.rssBytesPerSocket / 1024).toFixed(1)} KB`],
  ["failover", "a master killed: its keys' p99; last refusal after the kill (medians of the runs)", "", (r) => r.failover?.runs && `${ms(r.failover.medianP99Ms.killedMaster)}; ${ms(median(r.failover.runs.map((run) => run.lastRefusedAfterMs)))}`],
];

/** Each part's method: its heading (other pages link to some), and a few lines. */
const METHODS = {
  latency: [
    "One request at a time and 50 connections",
    "The upstream called directly, the bare proxy and the adapter (chat completions and Responses, plain and streamed) take turns: `BENCH_REPEATS` rounds of 1,000 sequential requests each, then rounds of `BENCH_SECONDS` at 50 connections (autocannon). Added latency is each round's p50 less the upstream's, then the median over rounds; the share is the median of each round's adapter over bare-proxy throughput. Run alone with `BENCH_BASE=<an older built checkout>`, that checkout's adapter takes its turns too (the `…Base` rows).",
  ],
  cpu: [
    "CPU per request, side by side",
    "`bench/cpu.mjs`: the bare proxy, the translation floor (`bench/translation-floor.mjs`: undici upstream, JSON in and out, no features), the adapter's chat completion, Responses create and structured answer, a traced chat completion and an MCP `ask` on each revision, at 50 connections against the instant upstream, the rows taking turns in alternating order. Each round counts a window of steady load, from 5 s into it (a process idle through the other rows' turns costs more a request for a few seconds after the load comes back): each server process's CPU time (all its threads) over the requests it served. A ratio is the median of the rounds' own ratios, with their range; the proxy's own CPU swings with the machine, so compare builds in one run, taking turns: `BENCH_BASE=<an older built checkout>` adds that checkout's chat, Responses and MCP rows (`…Base`, and the ratios `…OverBase`).",
  ],
  tracing: [
    "Tracing",
    "`bench/tracing.mjs`: the chat route at 50 connections with tracing off, on at sampling 1.0, at 0.1 and at 0 (`parentbased_traceidratio`; at 0 every request is one the sampler drops), and a second untraced adapter the same as the first (two identical processes differ by a few per cent: the ratio of the two is what one run can tell apart), exporting OTLP/HTTP protobuf to a sink in another process, taking turns in alternating order; each round's process CPU per request in a window of steady load, compared pair by pair. The adapters run as `npm start` runs them: on Node 22 the traced ones with `--experimental-async-context-frame` (docs/observability.md#what-tracing-costs). Run alone with `BENCH_BASE=<an older built checkout>` it also measures that checkout, for comparing builds.",
  ],
  waiting: [
    "Waiting queries cost polls, not requests",
    "10, 100, then 1,000 requests wait on queries that never finish in one workspace of the embedded workspace, polled every 100 ms; the list calls the pollers make over 3 s, per poll, against the pages 100 queries a page needs.",
  ],
  streams: [
    "Many open streams",
    "5,000 streamed requests wait on queries that never finish (a keep-alive every second); the adapter's RSS is sampled while they open and every half second for 10 s after, and its event-loop delay is read while they are open.",
  ],
  tokens: [
    "Token counting",
    "`bench/tokens.mjs`, in the benchmark's own process: the adapter's counter (`src/tokens`) on a 200 KB answer (the README and docs/ repeated; the longest gap between ticks of a 1 ms timer while it counts), on the instant upstream's answer, on its gist in five other scripts and on docs/ in 600-character chunks (least CPU of 7 batches), and on one 32,000-letter word, beside tiktoken and gpt-tokenizer on the same texts (gpt-tokenizer remembers the pieces it has counted, which helps it on repeated text). The counter is ours because both libraries merge one long piece in quadratic time: a client's one-word prompt of `BODY_LIMIT_BYTES` would cost minutes of CPU there.",
  ],
  realtime: [
    "The realtime channel",
    "`bench/channel-upstream.mjs` publishes a query's first word 150 ms after its create, then a word every 5 ms, and ends it at 300 ms; 100 streamed and 100 plain requests, with the channel and polling alone. Then 1,000 streams wait with their channels open (the embedded workspace), for the adapter's event-loop delay and memory.",
  ],
  replicas: [
    "Replicas: list calls the workspace service sees",
    "`bench/replicas.mjs`: 200 requests wait in one workspace (two pages a poll), spread over 1, 2 and 4 replicas, each polling alone, then sharing through Redis; the list calls all replicas make per 100 ms poll interval.",
  ],
  redis: [
    "Slow Redis: the command bound and conversations",
    "`bench/redis-latency.mjs`: 40 conversations of 8 turns, each turn sent to the other of two replicas sharing one Redis, while 8 CPU-bound processes keep the cores busy, with `REDIS_COMMAND_TIMEOUT_MS` at 50 and at 1000 ms. A fork is a follow-up answered as a new query; a refusal (503, sent again) a lookup that outlived the bound.",
  ],
  limits: [
    "Rate limits: what they cost",
    "`bench/rate-limits.mjs`: the chat path with `RATE_LIMIT_RPM` alone and with all three limits set (never refusing), in process and in Redis, against unset; one client key; the adapters take turns, and the figure is the median of the rounds' differences from the unset one.",
  ],
  governance: [
    "Usage counting and the audit trail: what they cost",
    "`bench/governance.mjs`: the chat path with `USAGE_COUNTING=on`, with an audit record of every answer to a file (`AUDIT_LOG`), and both with usage in Redis, against governance off (or the build named by `BENCH_BASELINE`); medians of the rounds' differences.",
  ],
  mcp: [
    "MCP tool calls",
    "`bench/mcp.mjs`: one `ask` tool call on each revision against one chat completion of the same answer, at 50 connections, taking turns; then 500 `ask` calls with a progress token wait at once (queries that never finish), each an SSE stream with a progress notification every second, for the adapter's memory and event-loop delay. Every call goes through the MCP SDK.",
  ],
  oauth: [
    "MCP over OAuth",
    "`bench/oauth.mjs`: an `ask` call at `/oauth/mcp` with an access token against the same call at `/mcp` with the key on one adapter with `MCP_OAUTH=on`, and at `/mcp` with OAuth off; CPU at 50 connections and p50 latency one call at a time, medians of the rounds' differences.",
  ],
  "chat-ui-tasks": [
    "Chat UIs' housekeeping",
    "`bench/chat-ui-tasks.mjs`: Open WebUI's title request as it sends it, answered by the adapter (`CHAT_UI_TASKS=local`) and passed on to the instant upstream, beside an ordinary question; rounds of 500 sequential requests and 50 connections, taking turns.",
  ],
  structured: [
    "Structured answers",
    "`bench/structured.mjs`: the same answer asked in prose and as JSON matching a strict `json_schema` (three nested objects and an array), which the instant upstream writes as JSON when the question carries the instruction block; the adapters take turns, and the figure is the median of the rounds' differences.",
  ],
  schemas: [
    "The worst schemas",
    "`bench/structured.mjs` (`schemaWorstCases`). Through the schema worker as `npm start` runs it (`workerWorstCases`): the CPU time of the bench's event-loop thread from the call to its answer (`process.threadCpuUsage`: a bound on the longest the loop is held at once that a busy machine does not inflate; the slowest of a few runs, each schema never seen before) while the largest schema accepted (about 44 KB, 1,400 properties, patterns up to the program budget) is checked and an answer nested 20 deep is validated against a union of three branches (refused by the evaluation budget), beside their wall time on the worker; and a structured request's two round trips (a kept schema checked, the typical answer validated), as the event loop's busy time (its utilization) and wall time per pair. Then the same functions on the bench's own thread, as the worker runs them: CPU milliseconds to check a schema whose `pattern` is `x{1,1000}` repeated to 999 characters (refused before anything is compiled) and the largest schema accepted, and to validate a typical answer and 20,000 strings under `uniqueItems` ([structured-answers.md](structured-answers.md#the-schema-is-untrusted)).",
  ],
  ownership: [
    "Whose query it is",
    "`bench/ownership.mjs`: the chat path against the instant upstream with one listed key, its own key going upstream (pass-through: nothing recorded or checked) and behind the deployment's `WORKSPACE_API_KEY` (shared: each query's owner recorded, a `query_id` looked up first), asked a new question and a follow-up by `query_id`, in process and on a real redis-server; the adapters take turns, and a figure is the median of the rounds' differences from pass-through ([governance.md](governance.md#whose-query-it-is)). `BENCH_BASELINE=<an older built checkout>` adds that build as a reference for the check when off.",
  ],
  quotas: [
    "Token quotas: what a reservation costs",
    "`bench/quotas.mjs`: the chat path against the instant upstream with one client key and no token limit, a daily quota in process, a daily quota in Redis, and the daily and monthly quotas and the tokens per minute in Redis, none of them ever refusing; the adapters take turns, and a figure is the median of the rounds' differences from no quota ([rate-limits.md](rate-limits.md#reservations)). `BENCH_BASELINE=<an older built checkout>` adds that build's daily quota as a reference.",
  ],
  background: [
    "Background responses",
    "`bench/background.mjs`: 1,000 background answers in flight (queries stalled upstream; state in process), their heap and RSS each above the adapter's own after a warm-up; and a finished answer resumed (`GET /v1/responses/{id}?stream=true&starting_after=2`), one at a time, from state in process and in Redis.",
  ],
  websocket: [
    "WebSocket mode",
    "`bench/websocket.mjs`: one adapter against the instant upstream; the same Responses turn one at a time over a WebSocket (`response.create` on one open socket), streamed over HTTP (SSE) and as one JSON body, 400 turns a round for each, taking turns in alternating order; p50 and p99 of each turn's time to its last event, and the adapter process's CPU per turn; medians over `BENCH_REPEATS` rounds. Then 1,000 idle sockets opened, the heap (after a collection) and RSS above the adapter's before, per socket ([responses-api.md](responses-api.md#websocket-mode)).",
  ],
  failover: [
    "Redis Cluster failover",
    "`bench/cluster-failover.mjs`: three adapters share a Redis Cluster of three masters with a replica each (node timeout 1 s, `REDIS_COMMAND_TIMEOUT_MS` 1000 ms), with 30 chat completions waiting; two read 24 stored responses over and over while the master holding the polling lease is killed (`SIGKILL`), until its replica has taken its slots over and a second more ([scale-out.md](scale-out.md#in-a-failover)).",
  ],
};

/**
 * Design choices the numbers above rest on, each with its measured reason (code comments link here).
 * Only what holds today: how it came about is in the commits.
 */
const SHAPED = [
  "Every route runs on plain `node:http` (the one route table) and upstream calls on undici's `dispatch`: Express's router and request decoration cost more than half the chat route's throughput in an isolated test (3.2k against 7.5k requests/s), so the answer routes never moved onto it and, since issue 59, no route is on it; `dispatch` costs about 25% less a call than `request()`.",
  "A request's context is passed along, never found by its response: a `WeakMap` keyed by the response had kept every request's objects alive through V8's minor GCs (5 KB a request promoted against 0.4 KB, 29 µs of minor GC a chat completion); `test/unit/http/request-context.test.ts` checks what a closed request leaves behind.",
  "A JSON body is encoded to UTF-8 once and written as one buffer beside its head (`endWithText`): a string body is measured, joined to the head and encoded again, and one character outside Latin-1 (every sources footer has an em dash) makes that join a two-byte string; ICU's transcoder encodes such a body of 1 KB or more (3.2 against 7.1 µs for a chat completion's).",
  "The hashes of the last 1,024 credentials are remembered: a SHA-256 costs about 1 µs in a loop but 4–5 µs on a loop busy serving (1.3% of a chat completion's CPU), a lookup a tenth of that.",
  "ioredis's `class VerbatimString extends String` leaves `String.prototype` in dictionary mode, and every string method call slow (a `charCodeAt` loop 4.2× slower, and OpenTelemetry's OTLP serializer writes strings a character at a time); one store through an object inheriting from the prototype makes it fast again at start (`src/util/string-methods.ts`). Side by side on 2026-11-28 (Node 24, 6 rounds): an untraced chat completion 136 against 168 µs of CPU, traced at sampling 1.0 207 against 286 µs.",
  "Libraries where a library does the job: pino writes the request's log line (`logger.info`), prom-client keeps every series, the MCP SDK answers every tool call, ipaddr.js judges special-use addresses and cluster-key-slot computes hash slots. At 50 answers a second a replica, what each costs over the hand-written code it replaced is below 1.5% of a core: pino 0.6 µs a line, prom-client 1 µs a request's five metric calls, the MCP SDK about 240 µs a tool call (1.2%).",
  "The token counter is ours (compact rank tables, an ASCII-first pre-tokenizer, a heap merge for long pieces; counts equal tiktoken's on documents, random text and every assigned character, whose classes are Unicode 16.0's as in tiktoken rather than the runtime's). It counts on the event loop, a long text in 16 KB slices with a turn between them: at 50 answers a second the token worker saved at most 2.6% of a core of event-loop time (12 KB prompts) and cost more CPU in all.",
  "Where a chat completion's CPU goes beyond the bare proxy's: four features, each taken out of a throwaway build in turn and all together, measured like the `cpu` part against the same instant upstream (two processes a variant taking turns with the bare proxy, 6 rounds, the median of each round's difference to the whole adapter; 2026-11-29, commit d980b6a). On Node 24 the whole adapter cost 139 µs (2.39× the bare proxy in that run): token counting 14 µs of it, citations (finding them, and the annotations, sources and Perplexity fields they add to the body) 26 µs, remembering the turn in the thread memory 22 µs, the request's log line 14 µs; without all four, 79 µs (1.31×). On Node 22: 157 µs (2.69×); 18, 20, 14 and 16 µs; without all four, 101 µs (1.63×). One feature's figure swings by about ±10 µs from round to round; the four together saved 48–73 µs a round on Node 24 and 52–65 on Node 22. Citations, the thread memory and the log line cost two to three times what their own functions take in a CPU profile (presumably the allocation and collection they bring, and a bigger body), token counting about what it takes there.",
  "So the bar of 2.0× the bare proxy leaves those four together about 38 µs on Node 24 and 18 µs on Node 22, against the 61 and 59 they take. Usage is a required field of the interface's answer, and citations and the thread are what clients come for; only the log line can be turned off (`LOG_LEVEL=warn`), and it is how a platform accounts for each request. At 50 answers a second a replica, a whole chat completion's 139–157 µs is 0.7–0.8% of a core.",
];

const PARTS_IN_ORDER = Object.keys(METHODS);

/** The page for `runs` (readResults': one result set per Node version), written to `file` unless it is undefined; returns the text. */
export function writePage(runs, file) {
  const first = runs[0];
  const machine = first ? `${first.machine.cpus} × ${first.machine.cpuModel}, ${first.machine.memoryGB} GB` : "no machine yet";
  const columns = runs.map((run) => `Node ${run.machine.node}`);
  const measured = runs.map((run) => `- Node ${run.machine.node}: ${whenMeasured(run)}`);
  const rows = ROWS.filter(([, , , value]) => runs.some((run) => cell(run, value) !== "—")).map(([part, what, target, value, ok]) => [
    `[${part}](#${anchorOf(METHODS[part][0])})`,
    what,
    target || "—",
    ...runs.map((run) => cell(run, value, target ? ok : undefined)),
  ]);
  const methods = PARTS_IN_ORDER.map((part) => `## ${METHODS[part][0]}\n\n${wrap(METHODS[part][1])}\n`);
  const page = `# Benchmarks

Measured by \`npm run bench\` on ${machine} (a virtual machine shared with other work), on the Node
versions \`engines\` allows:

${measured.length > 0 ? measured.join("\n") : "- none yet: run the command below"}

The command: \`BENCH_NODES="/path/to/node22 /path/to/node24" npm run bench\` measures under each Node in turn
(\`npm run bench\` alone, under the Node on the PATH); every server runs on loopback in its own process under
that Node, beside an upstream that answers at once (a finished, cited 1 KB answer) and a bare \`node:http\`
pass-through proxy (the yardstick: the same two HTTP hops, nothing else). \`BENCH_ONLY=<part>\` runs one part
(\`BENCH_MERGE=1\` keeps it); \`BENCH_SECONDS\` and \`BENCH_REPEATS\` set the rounds, \`BENCH_STREAMS\` the idle streams. The raw figures are in
\`bench/results/node-<major>.json\`; this page holds no history, which is in git.

## Results

${table([["part", "measure", "target", ...columns], ["---", "---", "---", ...columns.map(() => "---")], ...rows])}

${methods.join("\n")}
## What shaped these numbers

${SHAPED.map((line) => wrap(`- ${line}`, "  ")).join("\n")}
`;
  if (file) writeFileSync(file, page);
  return page;
}

/** When and on which commits a run's parts were measured (parts merged alone later keep their own). */
function whenMeasured(run) {
  const parts = Object.values(run.parts ?? {});
  const dates = (parts.length > 0 ? parts.map((part) => part.date) : [run.date]).sort();
  const day = (date) => date.slice(0, 16).replace("T", " ");
  const span = dates.length > 1 && day(dates[0]) !== day(dates.at(-1)) ? `${day(dates[0])} to ${day(dates.at(-1))}` : day(dates[0]);
  const byCommit = new Map();
  for (const [name, part] of Object.entries(run.parts ?? {})) byCommit.set(part.commit, [...(byCommit.get(part.commit) ?? []), name]);
  const commits = byCommit.size > 1 ? [...byCommit].map(([commit, names]) => `${commit ?? "?"} (${names.join(", ")})`).join(", ") : (run.commit ?? "?");
  return `${span} UTC, commit ${commits}`;
}

/** One figure with its verdict against the target, or a dash when that run did not measure it. */
function cell(results, value, ok) {
  let figure;
  try {
    figure = value(results);
  } catch {
    figure = undefined;
  }
  if (figure === undefined || figure === null || figure === false) return "—";
  if (!ok) return figure;
  return ok(results) ? `${figure} (met)` : `${figure} (**missed**)`;
}

const percent = (share) => `${Math.round(share * 100)}%`;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function libraries(figures, key, unit) {
  return ["adapter", "tiktoken", "gptTokenizer"].map((name) => (figures[name]?.[key] === undefined ? "—" : unit(figures[name][key]))).join("; ");
}

function replicaCalls(results, replicas, sharing) {
  return results.replicas.rows.find((row) => row.replicas === replicas && row.sharing === sharing)?.listCallsPerInterval;
}

/** GitHub's anchor of a heading. */
function anchorOf(heading) {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replaceAll(" ", "-");
}

/** Text wrapped at about 110 characters, continued lines indented by `indent`. */
function wrap(text, indent = "") {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + word.length + 1 > 110) {
      lines.push(line);
      line = indent + word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join("\n");
}

function table(rows) {
  return rows.map((row) => `| ${row.join(" | ")} |`).join("\n");
}
