import { Writable } from "node:stream";
import pino from "pino";
import { expect } from "vitest";
import { startEmbeddedWorkspace, type RunningWorkspace, type StartOptions } from "../../src/embedded-workspace/start-embedded-workspace.js";
import type { AdapterEffects } from "../../src/server/create-adapter.js";
import { traceLogMixin, type Tracing } from "../../src/telemetry/tracing.js";
import { localTracing } from "./local-tracing.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";
import { type RecordingProxy, startRecordingProxy } from "./recording-proxy.js";
import { FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "./start-stack.js";

/**
 * An adapter with tracing on, exporting over OTLP/HTTP to a loopback receiver, in front of a
 * recorded embedded workspace, in this process (its own tracer provider: `localTracing`). What the
 * SDK reads from the environment alone (resource, sampler, propagators) is tested through the
 * entry point instead (`startTracedProcess`, traced-process.ts).
 */
export interface TracedStack extends RunningAdapter {
  workspace: RunningWorkspace;
  /** What the workspace service received (its `traceparent` headers). */
  upstream: RecordingProxy;
  receiver: OtlpReceiver;
  tracing: Tracing;
  /** Every log line the adapter wrote, parsed. */
  logs: Record<string, unknown>[];
  /** Exports what is buffered and returns every span received so far. */
  flush(): Promise<ReceivedSpan[]>;
}

/**
 * Starts a traced stack. `otel` holds the export pipeline's standard variables beside the
 * receiver's endpoint (`OTEL_BSP_*`, `OTEL_EXPORTER_OTLP_*`); `environment` the adapter's own.
 */
export async function startTracedStack(
  otel: Record<string, string> = {},
  environment: Record<string, string> = {},
  options: { workspace?: Partial<StartOptions>; effects?: AdapterEffects } = {},
): Promise<TracedStack> {
  const workspace = await startEmbeddedWorkspace({
    documents: [FIXTURE_DOCUMENTS],
    workspaces: ["acme", "globex"],
    apiKeys: ["sk-test-key", "sk-other-key"],
    stepDelayMs: 10,
    ...options.workspace,
  });
  const upstream = await startRecordingProxy(workspace.url);
  const receiver = await startOtlpReceiver();
  const { tracing } = localTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...otel });
  const logs: Record<string, unknown>[] = [];
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: "info", mixin: traceLogMixin(tracing) }, lines);
  const running = await startAdapter(upstream.url, environment, logger, { tracing, ...options.effects });
  return {
    ...running,
    workspace,
    upstream,
    receiver,
    tracing,
    logs,
    async flush() {
      await tracing.flush();
      return receiver.spans();
    },
    async close() {
      await running.close();
      await tracing.shutdown();
      await Promise.all([upstream.close(), receiver.close()]);
      await workspace.close();
    },
  };
}

/** The one span named `name` (an error naming what there is otherwise). */
export function spanNamed(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length} among: ${spans.map((span) => span.name).join(", ")}`);
  return found[0] as ReceivedSpan;
}

/** The children of a span. */
export function childrenOf(spans: readonly ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId);
}

/** What an answer span is expected to say. */
export interface ExpectedAnswer {
  /** `chat {model}`, or `execute_tool {name}` for an MCP tool. */
  name: string;
  operation: "chat" | "execute_tool";
  model: string;
  mode: string;
  workspace: string;
  stream: boolean;
  /** The MCP tool's name (`execute_tool`). */
  tool?: string;
}

/**
 * The answer span of a request's trace, checked for what every answered request's trace carries
 * (docs/observability.md): a child of the server span, the GenAI attributes, the workspace query
 * as the conversation, a finished query, and the create call under it. A new answer route (the
 * MCP tools) proves its tracing with one call: start a `startTracedStack()`, call the route with a
 * `traceparent`, `await stack.flush()`, then `expectAnswerSpan(spans, traceId, {...})`.
 */
export function expectAnswerSpan(spans: readonly ReceivedSpan[], traceId: string, expected: ExpectedAnswer): ReceivedSpan {
  const trace = spans.filter((span) => span.traceId === traceId);
  const server = trace.find((span) => span.kind === "server");
  expect(server, `a server span in trace ${traceId}`).toBeDefined();
  const answer = spanNamed(trace, expected.name);
  expect(answer.parentSpanId).toBe(server?.spanId);
  expect(answer.kind).toBe("internal");
  expect(answer.attributes).toMatchObject({
    "gen_ai.operation.name": expected.operation,
    "gen_ai.provider.name": "workspace",
    "gen_ai.request.model": expected.model,
    "gen_ai.response.model": expected.mode,
    "gen_ai.request.stream": expected.stream,
    "gen_ai.response.finish_reasons": ["stop"],
    "workspace_adapter.workspace": expected.workspace,
    "workspace_adapter.mode": expected.mode,
    ...(expected.tool ? { "gen_ai.tool.name": expected.tool } : {}),
  });
  expect(answer.attributes["gen_ai.conversation.id"]).toEqual(expect.any(String));
  expect(answer.events.map((event) => event.name)).toContain("workspace_adapter.query.terminal");
  const create = spanNamed(childrenOf(trace, answer), "POST /queries");
  expect(create.attributes["http.response.status_code"]).toBe(200);
  return answer;
}
