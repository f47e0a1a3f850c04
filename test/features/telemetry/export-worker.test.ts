import { Writable } from "node:stream";
import type { Worker } from "node:worker_threads";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { startTracing } from "../../../src/telemetry/start-tracing.js";
import type { Tracing } from "../../../src/telemetry/tracing.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../helpers/otlp-receiver.js";
import { API_KEY, chatBody, FIXTURE_DOCUMENTS, headers, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// Spans leave through the export worker (docs/observability.md#how-spans-leave): batched as the
// OTEL_BSP_* variables say, compressed as OTEL_EXPORTER_OTLP_COMPRESSION says, held in bounded
// memory while the collector stalls (the rest dropped and counted), sent when tracing shuts down;
// a worker that stops loses what it held, never the adapter.

let receiver: OtlpReceiver;
let reports: string[];
const started: Tracing[] = [];

beforeEach(async () => {
  receiver = await startOtlpReceiver();
  reports = [];
});

afterEach(async () => {
  receiver.stall(false);
  await Promise.all(started.splice(0).map((tracing) => tracing.shutdown()));
  await receiver.close();
});

async function traced(env: Record<string, string> = {}): Promise<Tracing> {
  const { tracing } = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...env }, { serviceVersion: "test", onExportError: (message) => reports.push(message) });
  if (!tracing) throw new Error("tracing did not start");
  started.push(tracing);
  return tracing;
}

function endSpans(tracing: Tracing, count: number, name = "span"): void {
  for (let index = 0; index < count; index += 1) tracing.startSpan(`${name} ${index}`, { kind: 0 }).end();
}

describe("the export worker", () => {
  it("sends batches of at most OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans", async () => {
    const tracing = await traced({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "3" });
    endSpans(tracing, 7);
    await tracing.flush();
    expect(receiver.spans().map((span) => span.name).sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((index) => `span ${index}`));
    expect(receiver.exports.map((received) => received.spans.length)).toEqual([3, 3, 1]);
  });

  it("holds at most OTEL_BSP_MAX_QUEUE_SIZE spans while the collector stalls, dropping and counting the rest, and reporting it once", async () => {
    const tracing = await traced({ OTEL_BSP_MAX_QUEUE_SIZE: "10", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "5" });
    receiver.stall(true);
    endSpans(tracing, 5);
    await waitFor(() => receiver.stalled === 1, "a batch to reach the stalled collector");
    expect(reports).toEqual([]);
    endSpans(tracing, 95, "more");
    // Ten wait behind the batch the collector holds: the other 85 never queue.
    expect(tracing.droppedSpans).toEqual({ queue_full: 85, export_failed: 0, worker_stopped: 0 });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^trace export cannot keep up: spans are dropped \(1 so far; OTEL_BSP_MAX_QUEUE_SIZE=10 spans wait at most\)/);
    receiver.stall(false);
    await tracing.flush();
    expect(receiver.spans()).toHaveLength(15);
    // Room again once the collector answers.
    endSpans(tracing, 1, "later");
    await tracing.flush();
    expect(receiver.spans().map((span) => span.name)).toContain("later 0");
    expect(tracing.droppedSpans.queue_full).toBe(85);
  });

  it("sends what is left when tracing shuts down, however long the schedule delay", async () => {
    const tracing = await traced({ OTEL_BSP_SCHEDULE_DELAY: "600000" });
    endSpans(tracing, 3);
    await tracing.shutdown();
    expect(receiver.spans()).toHaveLength(3);
    // Spans ended afterwards are ignored.
    endSpans(tracing, 1);
    await tracing.flush();
    expect(receiver.spans()).toHaveLength(3);
  });

  it("counts the spans of failed exports and reports the failure and the recovery", async () => {
    const tracing = await traced();
    receiver.failWith(400);
    endSpans(tracing, 2);
    await tracing.flush();
    expect(tracing.droppedSpans.export_failed).toBe(2);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^trace export failed, spans are lost \(1 batch so far\): /);
    receiver.failWith(null);
    endSpans(tracing, 1);
    await tracing.flush();
    expect(reports[1]).toBe("trace export works again (1 batch of spans lost)");
    expect(receiver.spans()).toHaveLength(1);
  });

  it("compresses with OTEL_EXPORTER_OTLP_COMPRESSION=gzip", async () => {
    const tracing = await traced({ OTEL_EXPORTER_OTLP_COMPRESSION: "gzip", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    endSpans(tracing, 2);
    await tracing.flush();
    expect(receiver.exports[0]?.headers["content-encoding"]).toBe("gzip");
    expect(receiver.exports[0]?.contentType).toBe("application/json");
    expect(receiver.spans()).toHaveLength(2);
  });
});

describe("an export worker that fails", () => {
  it("loses the spans it held, counted and reported; the adapter answers on, and a new worker exports again", async () => {
    const workers: Worker[] = [];
    const onWorker = (worker: Worker) => workers.push(worker);
    process.on("worker", onWorker);
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 0 });
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, new Writable({ write: (chunk: Buffer, _encoding, done) => done(void lines.push(JSON.parse(chunk.toString()))) }));
    const { tracing } = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, { serviceVersion: "test", onExportError: (message) => logger.warn(message) });
    if (!tracing) throw new Error("tracing did not start");
    started.push(tracing);
    const adapter = await startAdapter(workspace.url, {}, logger, { tracing });
    const ask = async () => {
      const response = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("What is the travel policy?")) });
      await response.text();
      return response.status;
    };
    try {
      const exportWorker = await waitFor(() => workers.at(-1), "the export worker to start");
      receiver.stall(true);
      expect(await ask()).toBe(200);
      void tracing.flush();
      await waitFor(() => receiver.stalled === 1, "the worker to hold the request's spans in an export");
      // A message the worker cannot read: it throws, uncaught, and the worker dies.
      exportWorker.postMessage(null);

      expect(await ask()).toBe(200);
      const stopped = await waitFor(() => lines.find((line) => String(line.msg).startsWith("the trace export worker stopped")), "the stop to be logged");
      expect(String(stopped.msg)).toMatch(/^the trace export worker stopped \(.*null.*\): [1-9]\d* spans? lost; starting it again in 1 s$/);
      expect(tracing.droppedSpans.worker_stopped).toBeGreaterThan(0);
      const metrics = await (await fetch(`${adapter.url}/metrics`)).text();
      expect(metrics).toContain(`adapter_trace_spans_dropped_total{reason="worker_stopped"} ${tracing.droppedSpans.worker_stopped}`);

      receiver.stall(false);
      await waitFor(() => workers.length === 2, "a new export worker");
      expect(await ask()).toBe(200);
      await waitFor(async () => {
        await tracing.flush();
        return receiver.spans().some((span) => span.name === "POST /v1/chat/completions");
      }, "the new worker to export a request's spans");
    } finally {
      process.off("worker", onWorker);
      await adapter.close();
      await workspace.close();
    }
  });
});
