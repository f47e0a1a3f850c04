import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from "@grpc/grpc-js";
import { fromProtobuf, type ReceivedSpan } from "./otlp-receiver.js";

/** A running OTLP/gRPC trace receiver. */
export interface OtlpGrpcReceiver {
  /** `http://127.0.0.1:port`, as `OTEL_EXPORTER_OTLP_ENDPOINT` names a gRPC receiver. */
  endpoint: string;
  /** The metadata (headers) of each export call. */
  calls: Record<string, string>[];
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/**
 * A loopback OTLP/gRPC receiver, standing in for a collector's port 4317 (none is installable
 * here): a real gRPC server (`@grpc/grpc-js`) serving the collector's trace service,
 * `opentelemetry.proto.collector.trace.v1.TraceService/Export`. Requests are taken as their
 * protobuf bytes and read by the same wire reader as the HTTP receiver's (otlp-receiver.ts); the
 * answer is an empty `ExportTraceServiceResponse` (no bytes).
 */
export async function startOtlpGrpcReceiver(): Promise<OtlpGrpcReceiver> {
  const received: ReceivedSpan[] = [];
  const calls: Record<string, string>[] = [];
  const server = new Server();
  const bytes = (value: Buffer) => value;
  server.addService(
    {
      Export: {
        path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        requestStream: false,
        responseStream: false,
        requestSerialize: bytes,
        requestDeserialize: bytes,
        responseSerialize: bytes,
        responseDeserialize: bytes,
      },
    },
    {
      Export(call: ServerUnaryCall<Buffer, Buffer>, answer: sendUnaryData<Buffer>) {
        calls.push(Object.fromEntries(Object.entries(call.metadata.getMap()).map(([key, value]) => [key, String(value)])));
        received.push(...fromProtobuf(call.request));
        answer(null, Buffer.alloc(0));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    spans: () => [...received],
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 2000).unref();
      }),
  };
}
