// The embedded workspace in its own process, for the benchmark's waiting-query and idle-stream runs.
import { startEmbeddedWorkspace } from "../dist/src/embedded-workspace/start-embedded-workspace.js";

const workspace = await startEmbeddedWorkspace({ workspaces: ["bench"], stepDelayMs: Number(process.env.STEP_DELAY_MS ?? 0) });
process.send?.({ port: Number(new URL(workspace.url).port) });
