import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { type RunningWorkspace, type StartOptions, startEmbeddedWorkspace } from "../../src/embedded-workspace/start-embedded-workspace.js";
import { projectRoot } from "../../src/util/package-info.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";
import { type RecordingProxy, startRecordingProxy } from "./recording-proxy.js";
import { API_KEY, FIXTURE_DOCUMENTS } from "./start-stack.js";

/** Where a traced process sends its spans: an OTLP/HTTP receiver, or another kind (gRPC) with the same reading side. */
export interface SpanReceiver {
  /** What `OTEL_EXPORTER_OTLP_ENDPOINT` is set to. */
  endpoint: string;
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/** The compiled entry point (`main.ts`) run as a process of its own, traced as its environment says, in front of a recorded workspace. */
export interface TracedProcess<R extends SpanReceiver = OtlpReceiver> {
  /** The adapter's address (without `/v1`). */
  url: string;
  /** The embedded workspace the adapter calls (through `upstream`), or none when the process runs its own. */
  workspace: RunningWorkspace | undefined;
  /** What the workspace service received (its trace context headers), when the adapter calls it through the proxy. */
  upstream: RecordingProxy | undefined;
  receiver: R;
  /** Every JSON log line the process wrote so far, parsed. */
  logs: Record<string, unknown>[];
  /** Every span received so far (the process exports every `OTEL_BSP_SCHEDULE_DELAY`: 50 ms here). */
  flush(): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** How to start it. */
export interface TracedProcessOptions<R extends SpanReceiver> {
  /** The standard variables and the adapter's, beside those the helper sets (the receiver's endpoint, a 50 ms schedule delay). */
  env?: Record<string, string>;
  /** Node's own flags before the entry point (`--import …`: a platform's instrumentation). */
  nodeArgs?: string[];
  /** The receiver to export to (an OTLP/HTTP one by default). */
  receiver?: R;
  /** The process runs its own embedded workspace (in its process: instrumented with it) rather than calling the test's through a recording proxy. */
  ownWorkspace?: boolean;
  workspace?: Partial<StartOptions>;
}

const root = projectRoot();

/**
 * Starts `dist/src/main.js` (the real entry point, as an operator or a platform runs it) with tracing
 * set by `env`, exporting to a receiver in this process, and waits for it to serve. What the
 * OpenTelemetry SDK reads from the environment alone — resource, sampler, propagators, exporter
 * protocol, headers — is tested this way.
 */
export async function startTracedProcess<R extends SpanReceiver = OtlpReceiver>(options: TracedProcessOptions<R> = {}): Promise<TracedProcess<R>> {
  const receiver = (options.receiver ?? (await startOtlpReceiver())) as R;
  let workspace: RunningWorkspace | undefined;
  let upstream: RecordingProxy | undefined;
  if (!options.ownWorkspace) {
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 10, ...options.workspace });
    upstream = await startRecordingProxy(workspace.url);
  }
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(root, "dist/src/main.js")], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      POLL_INTERVAL_MIN_MS: "10",
      POLL_INTERVAL_MAX_MS: "50",
      WORKSPACE_BASE_URL: upstream?.url ?? "",
      EMBEDDED_STEP_DELAY_MS: "10",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "50",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  let output = "";
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    errors += chunk.toString();
  });
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("{")) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const closeAll = async () => {
    await stop(child, exited);
    await Promise.all([upstream?.close(), receiver.close()]);
    await workspace?.close();
  };
  const deadline = Date.now() + 45_000; // generous: a busy machine starts a process slowly
  let url: string | undefined;
  while (!(url = /serving (http:\/\/\S+)\/v1/.exec(output)?.[1])) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await closeAll();
      throw new Error(`the adapter did not start (exit ${child.exitCode}): ${errors}${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    workspace,
    upstream,
    receiver,
    logs,
    flush: () => Promise.resolve(receiver.spans()),
    close: closeAll,
  };
}

async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(killed);
}
