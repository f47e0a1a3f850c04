// The adapter as `main.ts` serves it, in its own process, reporting its event-loop delay and memory
// to the benchmark on request (IPC), so that the client's own sockets are not counted against it.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../dist/src/config/config.js";
import { createAdapter } from "../dist/src/server/create-adapter.js";
import { startServer } from "../dist/src/server/start-server.js";
import { startTracing } from "../dist/src/telemetry/start-tracing.js";

const config = loadConfig({ ...process.env, PORT: "0", HOST: "127.0.0.1" });
// Tracing as main.ts starts it: on when the environment sets OTEL_EXPORTER_OTLP_ENDPOINT.
const { tracing } = await startTracing({ serviceVersion: "bench" });
const adapter = createAdapter(config, process.env.UPSTREAM_URL, { tracing });
const running = await startServer(adapter, config);
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();

process.on("message", async (message) => {
  if (message === "reset") delay.reset();
  if (message === "exit") process.exit(0);
  if (message === "heap-snapshot") {
    global.gc?.();
    process.send?.({ snapshot: (await import("node:v8")).writeHeapSnapshot("/tmp/adapter.heapsnapshot") });
  }
  if (message === "stats" || message === "stats-after-gc") {
    if (message === "stats-after-gc") global.gc?.();
    process.send?.({
      stats: {
        rssBytes: process.memoryUsage().rss,
        heapUsedBytes: process.memoryUsage().heapUsed,
        heapTotalBytes: process.memoryUsage().heapTotal,
        externalBytes: process.memoryUsage().external,
        cpuMicros: process.cpuUsage().user + process.cpuUsage().system,
        loopActiveMs: performance.eventLoopUtilization().active,
        requests: Number((await adapter.metrics.registry.getSingleMetric("adapter_http_requests_total")?.get())?.values.reduce((sum, value) => sum + value.value, 0) ?? 0),
        eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
        eventLoopDelayMaxMs: delay.max / 1e6,
        openStreams: adapter.lifecycle.openStreams,
        listCalls: Number((await adapter.metrics.listCalls.get()).values[0]?.value ?? 0),
        waitingQueries: adapter.watcher.waitingQueries,
        realtimeConnections: adapter.realtime?.openConnections ?? 0,
        realtimeSubscriptions: adapter.realtime?.activeSubscriptions ?? 0,
        realtimePublications: Number((await adapter.metrics.realtimePublications.get()).values[0]?.value ?? 0),
      },
    });
  }
});
process.send?.({ port: running.server.address().port });
