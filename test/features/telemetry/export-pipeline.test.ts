import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import type { Tracing } from "../../../src/telemetry/tracing.js";
import { localTracing } from "../../helpers/local-tracing.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../helpers/otlp-receiver.js";
import { API_KEY, chatBody, FIXTURE_DOCUMENTS, headers, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// Spans leave through the SDK's batch span processor and OTLP exporter (docs/observability.md#how-spans-leave):
// batched as the OTEL_BSP_* variables say, compressed as OTEL_EXPORTER_OTLP_COMPRESSION says, held in
// bounded memory while the collector stalls (the rest dropped and counted), sent when tracing shuts down.

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

function traced(env: Record<string, string> = {}): Tracing {
  const { tracing } = localTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...env }, { onExportError: (message) => reports.push(message) });
  started.push(tracing);
  return tracing;
}

function endSpans(tracing: Tracing, count: number, name = "span"): void {
  for (let index = 0; index < count; index += 1) tracing.startSpan(`${name} ${index}`, { kind: 0 }).end();
}

describe("the export pipeline", () => {
  it("sends batches of at most OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans", async () => {
    const tracing = traced({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "3" });
    endSpans(tracing, 7);
    await tracing.flush();
    expect(receiver.spans().map((span) => span.name).sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((index) => `span ${index}`));
    expect(receiver.exports.map((received) => received.spans.length)).toEqual([3, 3, 1]);
  });

  it("holds at most OTEL_BSP_MAX_QUEUE_SIZE spans while the collector stalls, dropping and counting the rest, and reporting it once", async () => {
    const tracing = traced({ OTEL_BSP_MAX_QUEUE_SIZE: "10", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "5" });
    receiver.stall(true);
    endSpans(tracing, 5);
    await waitFor(() => receiver.stalled === 1, "a batch to reach the stalled collector");
    expect(reports).toEqual([]);
    endSpans(tracing, 95, "more");
    // Ten wait behind the batch the collector holds: the other 85 never queue.
    expect(tracing.droppedSpans).toEqual({ queue_full: 85, export_failed: 0 });
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
    const tracing = traced({ OTEL_BSP_SCHEDULE_DELAY: "600000" });
    endSpans(tracing, 3);
    await tracing.shutdown();
    expect(receiver.spans()).toHaveLength(3);
    // Spans ended afterwards are ignored.
    endSpans(tracing, 1);
    await tracing.flush();
    expect(receiver.spans()).toHaveLength(3);
  });

  it("counts the spans of failed exports and reports the failure and the recovery", async () => {
    const tracing = traced();
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
    const tracing = traced({ OTEL_EXPORTER_OTLP_COMPRESSION: "gzip", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    endSpans(tracing, 2);
    await tracing.flush();
    expect(receiver.exports[0]?.headers["content-encoding"]).toBe("gzip");
    expect(receiver.exports[0]?.contentType).toBe("application/json");
    expect(receiver.spans()).toHaveLength(2);
  });
});

describe("the drop counter", () => {
  it("shows the spans the pipeline lost in adapter_trace_spans_dropped_total", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 0 });
    // One span waits at most, and the collector holds the first batch: a request's other spans are dropped.
    const tracing = traced({ OTEL_BSP_MAX_QUEUE_SIZE: "1", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1" });
    const adapter = await startAdapter(workspace.url, {}, undefined, { tracing });
    try {
      receiver.stall(true);
      const response = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("What is the travel policy?")) });
      expect(response.status).toBe(200);
      await response.text();
      await waitFor(() => tracing.droppedSpans.queue_full > 0, "a span to be dropped");
      const before = tracing.droppedSpans.queue_full;
      const metrics = await (await fetch(`${adapter.url}/metrics`)).text();
      // The scrape's own span may be dropped too, once the counter was read.
      const shown = Number(/adapter_trace_spans_dropped_total\{reason="queue_full"\} (\d+)/.exec(metrics)?.[1]);
      expect(shown).toBeGreaterThanOrEqual(before);
      expect(shown).toBeLessThanOrEqual(tracing.droppedSpans.queue_full);
      expect(metrics).toContain('adapter_trace_spans_dropped_total{reason="export_failed"} 0');
    } finally {
      receiver.stall(false);
      await adapter.close();
      await workspace.close();
    }
  });
});
