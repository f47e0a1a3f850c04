import { parentPort, workerData } from "node:worker_threads";
import { ExportResultCode } from "@opentelemetry/core";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ExportWorkerData, FromExportWorker, ToExportWorker } from "./export-messages.js";
import { ExportRequests } from "./otlp-request.js";
import { type BodyExporter, SpanExport } from "./span-export.js";
import { SpanRing } from "./span-ring.js";

// The export worker (docs/observability.md#how-spans-leave): batches the encoded spans the event
// loop writes into the ring they share and sends them with the SDK's OTLP/HTTP transport — the URL and headers as the
// adapter read them; timeout, compression, certificates and the retries of failed exports as the
// SDK's exporter does them from the other OTEL_EXPORTER_OTLP_* variables.

const data = workerData as ExportWorkerData;
const port = parentPort;
if (!port) throw new Error("export-worker.ts runs as a worker thread");
const requests = new ExportRequests(data.protocol, data.resource, data.scope);
const send = (message: FromExportWorker) => port.postMessage(message);
const exporter = new SpanExport(new SpanRing(data.ring), requests, otlpExporter(data), data.batch, send);
port.on("message", (message: ToExportWorker) => exporter.receive(message));
exporter.start();

/** The SDK's OTLP/HTTP export delegate (what its OTLPTraceExporter wraps), sending request bodies built here. */
function otlpExporter({ protocol, url, headers }: ExportWorkerData): BodyExporter {
  const json = protocol === "http/json";
  const contentType = json ? "application/json" : "application/x-protobuf";
  const options = convertLegacyHttpOptions({ url, headers }, "TRACES", "v1/traces", { "Content-Type": contentType });
  const responses = json ? JsonTraceSerializer : ProtobufTraceSerializer;
  const serializer = {
    serializeRequest: (batch: Batch) => batch.body,
    deserializeResponse: (body: Uint8Array) => responses.deserializeResponse(body),
  };
  const delegate = createOtlpHttpExportDelegate(options, serializer, "otlp_http_span_exporter", { name: "span", countItems: (batch: Batch) => batch.spans }, undefined);
  return {
    export(body, spans, done) {
      delegate.export({ body, spans }, (result) => done(result.code === ExportResultCode.SUCCESS ? undefined : (result.error ?? new Error("export failed"))));
    },
    shutdown: () => delegate.shutdown(),
  };
}

interface Batch {
  body: Uint8Array;
  spans: number;
}
