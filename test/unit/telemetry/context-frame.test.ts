import { describe, expect, it } from "vitest";
import { CONTEXT_FRAME_FLAG, contextFrameRelaunch } from "../../../src/telemetry/context-frame.js";

// When a traced adapter executes itself again with async context frames (docs/observability.md#what-tracing-costs).

const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
const node22 = { version: "v22.23.5", execPath: "/usr/bin/node", execArgv: ["--enable-source-maps"], argv: ["/usr/bin/node", "dist/src/main.js", "--port", "9000"] };

describe("whether the adapter executes itself again with async context frames", () => {
  it("does on Node 22 when the environment turns tracing on, with its own flags and arguments kept", () => {
    expect(contextFrameRelaunch({ ...node22, env: traced })).toEqual(["/usr/bin/node", "--enable-source-maps", CONTEXT_FRAME_FLAG, "dist/src/main.js", "--port", "9000"]);
  });

  it("does not when tracing is off, on Node 24 (frames by default), or when the switch is named already, either way", () => {
    expect(contextFrameRelaunch({ ...node22, env: {} })).toBeUndefined();
    expect(contextFrameRelaunch({ ...node22, env: { ...traced, OTEL_SDK_DISABLED: "true" } })).toBeUndefined();
    expect(contextFrameRelaunch({ ...node22, env: traced, version: "v24.22.3" })).toBeUndefined();
    expect(contextFrameRelaunch({ ...node22, env: traced, execArgv: [CONTEXT_FRAME_FLAG] })).toBeUndefined();
    expect(contextFrameRelaunch({ ...node22, env: traced, execArgv: ["--no-experimental-async-context-frame"] })).toBeUndefined();
    expect(contextFrameRelaunch({ ...node22, env: { ...traced, NODE_OPTIONS: `--max-old-space-size=512 ${CONTEXT_FRAME_FLAG}` } })).toBeUndefined();
  });
});
