// The realtime channel's part of `npm run bench`: how soon published text and ended queries reach
// a client with the channel and without it, and what 1,000 open streams with channels cost.
import { createParser } from "eventsource-parser";
import { Agent, request } from "undici";
import { startWorkspaceAndAdapter, statsOf } from "./processes.mjs";

const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };
const clock = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const summary = (values) => ({ p50Ms: round(percentile(values, 50)), p99Ms: round(percentile(values, 99)), maxMs: round(Math.max(...values)), samples: values.length });

/** A streamed request: when its first content and its end arrived, and its query id. */
async function streamed(url, dispatcher) {
  const response = await request(`${url}/v1/chat/completions`, {
    method: "POST",
    headers,
    dispatcher,
    body: JSON.stringify({ model: "ask", stream: true, messages: [{ role: "user", content: "How much annual leave do employees get?" }] }),
  });
  const result = { id: String(response.headers["service-query-id"]), firstContentAt: null, doneAt: null, content: "" };
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === "[DONE]") {
        result.doneAt = clock();
        return;
      }
      const text = JSON.parse(event.data).choices?.[0]?.delta?.content;
      if (text) {
        result.firstContentAt ??= clock();
        result.content += text;
      }
    },
  });
  for await (const chunk of response.body) parser.feed(chunk.toString());
  return result;
}

/** A plain request: when its answer arrived, and its query id. */
async function plain(url, dispatcher) {
  const response = await request(`${url}/v1/chat/completions`, {
    method: "POST",
    headers,
    dispatcher,
    body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] }),
  });
  const body = await response.body.json();
  return { id: String(response.headers["service-query-id"]), doneAt: clock(), content: body.choices?.[0]?.message?.content ?? "" };
}

function timingsOf(child, ids) {
  return new Promise((resolve) => {
    const listener = (message) => {
      if (message.timings) {
        child.off("message", listener);
        resolve(message.timings);
      }
    };
    child.on("message", listener);
    child.send({ times: ids });
  });
}

/**
 * Against an upstream whose list shows no partial output (bench/channel-upstream.mjs): a query's
 * first word is published 150 ms after its create, a word every 5 ms after that, and it ends at
 * 300 ms. Measured, with the channel (`REALTIME=auto`) and polling alone (`REALTIME=off`, the
 * default intervals): first content after the first publication (streamed), and the end of the
 * answer after the query ended (streamed and plain). Requests start every 50 ms, overlapping.
 */
export async function realtimeLatency(start, samples = Number(process.env.BENCH_REALTIME_SAMPLES ?? 100)) {
  const upstream = await start("channel-upstream.mjs");
  const results = {};
  for (const [name, realtime] of [["channel", "auto"], ["polling", "off"]]) {
    const adapter = await start("adapter-process.mjs", { UPSTREAM_URL: upstream.url, DEFAULT_WORKSPACE: "bench", LOG_LEVEL: "warn", REALTIME: realtime });
    const dispatcher = new Agent({ connections: 200 });
    await streamed(adapter.url, dispatcher); // warm-up, discarded
    const runs = [];
    for (let index = 0; index < samples; index += 1) {
      runs.push(streamed(adapter.url, dispatcher).then((result) => ({ kind: "streamed", ...result })));
      runs.push(plain(adapter.url, dispatcher).then((result) => ({ kind: "plain", ...result })));
      await sleep(50);
    }
    const finished = await Promise.all(runs);
    const timings = await timingsOf(upstream.child, finished.map((run) => run.id));
    const expected = finished[0].content;
    const firstContent = [];
    const streamedEnd = [];
    const plainEnd = [];
    for (const run of finished) {
      const timing = timings[run.id];
      if (!timing?.endedAt || run.content !== expected) throw new Error(`query ${run.id}: no timing, or an answer other than the others'`);
      if (run.kind === "streamed") {
        firstContent.push(run.firstContentAt - timing.firstPublishedAt);
        streamedEnd.push(run.doneAt - timing.endedAt);
      } else {
        plainEnd.push(run.doneAt - timing.endedAt);
      }
    }
    const stats = await statsOf(adapter.child);
    results[name] = {
      firstContentAfterFirstPublication: summary(firstContent),
      streamEndAfterQueryEnded: summary(streamedEnd),
      plainAnswerAfterQueryEnded: summary(plainEnd),
      publicationsReceived: stats.realtimePublications,
      listCalls: stats.listCalls,
    };
    await dispatcher.close();
    adapter.child.kill();
  }
  upstream.child.kill();
  return results;
}

/**
 * `count` concurrent streams whose queries never finish, each with its channel open (the embedded
 * workspace publishes their steps, then nothing): the adapter's RSS (highest sample while opening
 * and 10 s open) and event-loop delay p99 while they are open; then every stream is closed and the
 * realtime connections and subscriptions left are counted.
 */
export async function channelStreams(start, count = Number(process.env.BENCH_CHANNEL_STREAMS ?? 1000)) {
  const { workspace, adapter } = await startWorkspaceAndAdapter(
    start,
    { MAX_CONCURRENT_REQUESTS: "100000", MAX_CONCURRENT_PER_WORKSPACE: "100000" },
    { STEP_DELAY_MS: "120" },
  );
  const dispatcher = new Agent({ connections: count + 10, headersTimeout: 120_000, bodyTimeout: 120_000 });
  await plain(adapter.url, dispatcher); // a finished completion first: the baseline has what a serving adapter has loaded
  const baseline = await statsOf(adapter.child);
  const controllers = [];
  const opened = [];
  for (let index = 0; index < count; index += 1) {
    const controller = new AbortController();
    controllers.push(controller);
    opened.push(
      request(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers,
        dispatcher,
        signal: controller.signal,
        body: JSON.stringify({ model: "ask", stream: true, messages: [{ role: "user", content: `leave ${index} [fault:stall]` }] }),
      })
        .then(async (response) => {
          for await (const _chunk of response.body);
        })
        .catch(() => null),
    );
    if (index % 250 === 249) await sleep(50);
  }
  let peakRss = 0;
  const deadline = Date.now() + 60_000;
  for (let stats = await statsOf(adapter.child); stats.realtimeSubscriptions < count && Date.now() < deadline; stats = await statsOf(adapter.child)) {
    peakRss = Math.max(peakRss, stats.rssBytes);
    await sleep(200);
  }
  adapter.child.send("reset");
  for (let sample = 0; sample < 20; sample += 1) {
    await sleep(500);
    peakRss = Math.max(peakRss, (await statsOf(adapter.child)).rssBytes);
  }
  const open = await statsOf(adapter.child);
  for (const controller of controllers) controller.abort();
  await Promise.all(opened);
  await sleep(1000);
  const closed = await statsOf(adapter.child);
  await dispatcher.close();
  adapter.child.kill();
  workspace.child.kill();
  return {
    streams: open.openStreams,
    subscriptions: open.realtimeSubscriptions,
    connections: open.realtimeConnections,
    publicationsReceived: open.realtimePublications,
    baselineRssMB: round(baseline.rssBytes / 2 ** 20, 1),
    peakRssMB: round(Math.max(peakRss, open.rssBytes) / 2 ** 20, 1),
    eventLoopDelayP99Ms: round(open.eventLoopDelayP99Ms),
    eventLoopDelayMaxMs: round(open.eventLoopDelayMaxMs),
    afterClose: { streams: closed.openStreams, connections: closed.realtimeConnections, subscriptions: closed.realtimeSubscriptions },
  };
}
